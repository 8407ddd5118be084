//go:build !linux

package ffmpeg

import "os"

// maxRSS is unknown off Linux, where Rusage.Maxrss differs in unit or is
// absent.
func maxRSS(*os.ProcessState) int64 { return 0 }
