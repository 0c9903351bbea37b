//go:build !unix

package semantic

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
