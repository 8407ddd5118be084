package job

import "fmt"

// State is where a job is in its life.
type State string

// The states. A job exists before its file does (AwaitingUpload); the upload
// event moves it to Created, and the pipeline takes it on from there. Done,
// Failed and Dead are terminal: Failed means the input or a provider's
// permanent answer makes success impossible, Dead that transient errors
// outlasted the attempt limit.
const (
	AwaitingUpload State = "awaiting_upload"
	Created        State = "created"
	Converted      State = "converted"
	Transcribe     State = "transcribe"
	Done           State = "done"
	Failed         State = "failed"
	Dead           State = "dead"
)

// States lists every state in pipeline order.
var States = []State{AwaitingUpload, Created, Converted, Transcribe, Done, Failed, Dead}

// forward holds the moves of the happy path; every live state may also stay
// where it is (a step saves progress) or end in Failed or Dead. A job that
// reuses an earlier transcript (reuse.go) ends Done from where its
// recording became known: a Telegram file before its download, an upload
// once accepted.
var forward = map[State][]State{
	AwaitingUpload: {Created, Done},
	Created:        {Converted, Done},
	Converted:      {Transcribe},
	Transcribe:     {Done},
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	for _, k := range States {
		if s == k {
			return true
		}
	}
	return false
}

// Terminal reports whether no step ever takes a job in s again.
func (s State) Terminal() bool { return s == Done || s == Failed || s == Dead }

// CanMove reports whether a job in state from may be saved in state to.
func CanMove(from, to State) bool {
	if !from.Valid() || !to.Valid() || from.Terminal() {
		return false
	}
	if to == from || to == Failed || to == Dead {
		return true
	}
	for _, next := range forward[from] {
		if next == to {
			return true
		}
	}
	return false
}

func checkMove(from, to State) error {
	if !CanMove(from, to) {
		return fmt.Errorf("%w: %s to %s", ErrIllegalMove, from, to)
	}
	return nil
}

// Source says through which door a job came in.
type Source string

// The sources.
const (
	SourceAPI      Source = "api"
	SourceTelegram Source = "telegram"
)

// Valid reports whether s is a known source.
func (s Source) Valid() bool { return s == SourceAPI || s == SourceTelegram }
