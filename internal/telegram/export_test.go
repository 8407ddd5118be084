package telegram

import "time"

// Caption is caption, for the tests of its cuts.
var Caption = caption

// RecordTimeout is what a delivery's window leaves of its lease to record
// the outcome: a test's lease of RecordTimeout + d gives its calls d.
const RecordTimeout = recordTimeout

// SetCallTimeout shortens the bound of a call outside a delivery's window
// (callTimeout); set it before the bot makes any call.
func SetCallTimeout(b *Bot, d time.Duration) { b.callTimeout = d }
