package benchvault

import (
	"os"
	"runtime"
	"testing"
)

// TestSampleAnon checks that the anonymous memory the process holds when
// the sampler stops is in its result, and that it is below the whole
// resident high-water mark, which includes it.
func TestSampleAnon(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	stop := SampleAnon()
	before := StatusMB("RssAnon:")
	buf := make([]byte, 96<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1 // touch every page so it is resident
	}
	got := stop()
	runtime.KeepAlive(buf)
	if got < before+90 {
		t.Errorf("peak anonymous memory %.1f MB, want at least %.1f MB (96 MB allocated over %.1f MB)", got, before+90, before)
	}
	if hwm := PeakMB(); got > hwm+1 {
		t.Errorf("anonymous peak %.1f MB above the resident peak %.1f MB", got, hwm)
	}
}
