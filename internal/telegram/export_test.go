package telegram

import (
	"time"

	"transcriber/internal/status"
)

// Caption is caption, for the tests of its cuts.
var Caption = caption

// RecordTimeout is what a delivery's window leaves of its lease to record
// the outcome: a test's lease of RecordTimeout + d gives its calls d.
const RecordTimeout = recordTimeout

// SetCallTimeout shortens the bound of a call outside a delivery's window
// (callTimeout); set it before the bot makes any call.
func SetCallTimeout(b *Bot, d time.Duration) { b.callTimeout = d }

// AlertText is alertText in l: "ru" is Russian, anything else English.
func AlertText(a status.Alert, l string) string { return alertText(lang(l), a) }

// StatusBrief is statusBrief in l, as AlertText.
func StatusBrief(s status.Status, l string) string { return statusBrief(lang(l), s) }
