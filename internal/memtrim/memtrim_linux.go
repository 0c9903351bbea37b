//go:build linux

package memtrim

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time this process used so far, user and system.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReleaseCode drops this process's mappings of the executable's read-only
// segments (code, read-only data, the symbol and line tables). The pages
// stay in the page cache; what the process runs afterwards faults them
// back in.
//
// Only a position-dependent executable (ELF type EXEC, Go's default on
// Linux) is released: its read-only segments are never written, so
// dropping them loses nothing. A position-independent one may hold
// relocated pages in a read-only mapping, which MADV_DONTNEED would
// discard, so it is left alone.
func ReleaseCode() (Released, error) {
	exe, err := releasableExecutable()
	if err != nil {
		return Released{}, err
	}
	maps, err := readOnlyMappings(exe)
	if err != nil {
		return Released{}, err
	}
	var r Released
	for _, m := range maps {
		if m.anon > 0 {
			// A page of it was written (a debugger's breakpoint, a
			// relocation): the file no longer holds what the process sees.
			continue
		}
		r.Bytes += m.rss
		// The raw call takes the range as numbers: the mapping is not Go
		// memory, so it is never turned into a slice.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return r, fmt.Errorf("releasing %x-%x: %w", m.start, m.end, errno)
		}
		r.Mappings++
	}
	return r, nil
}

// releasableExecutable is the executable's path when its read-only pages
// may be released: found and its header read once, as a front-end falling
// quiet releases after every burst of answers.
var releasableExecutable = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the executable: %w", err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		return "", fmt.Errorf("reading the executable's header: %w", err)
	}
	typ := f.Type
	f.Close()
	if typ != elf.ET_EXEC {
		return "", errors.New("the executable is position-independent: its read-only pages may be relocated, not released")
	}
	return exe, nil
})

type mapping struct {
	start, end uintptr
	rss        int64
	// anon is the size of the mapping's pages copied on write.
	anon int64
}

// readOnlyMappings lists the mappings of path that are neither writable nor
// shared, with their resident sizes, from /proc/self/smaps.
func readOnlyMappings(path string) ([]mapping, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, fmt.Errorf("reading this process's mappings: %w", err)
	}
	defer f.Close()
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4 {
			cur = nil
			if len(fields) < 6 || fields[5] != path || fields[1][1] == 'w' || fields[1][3] != 'p' {
				continue
			}
			lo, hi, ok := strings.Cut(fields[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("reading the mapping %q", fields[0])
			}
			out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && len(fields) == 3 {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			switch fields[0] {
			case "Rss:":
				cur.rss = kb << 10
			case "Anonymous:":
				cur.anon = kb << 10
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading this process's mappings: %w", err)
	}
	return out, nil
}
