package ffmpeg

import (
	"os"
	"syscall"
)

// maxRSS is the peak resident memory in bytes (Linux reports KiB).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
