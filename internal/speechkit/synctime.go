package speechkit

import "time"

// The modelled synchronous service time: SpeechKit documents none [U], so
// it is asynchronous recognition's 10 s a minute of audio [C] plus a 300 ms
// round trip. `transcriber measure-sync` measures the real one.
const (
	DefaultSyncPerMinute = 10 * time.Second
	DefaultSyncFixed     = 300 * time.Millisecond
)
