package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// A done job's transcript is reused by a later job of the same recording
// with the same recognition options, within a scope: the later job ends
// done at once, with no recognition, a copy of the earlier transcript and
// ReusedFrom naming it (package pipeline). The two meet by ReuseKey, a
// hash of the scope, the recording and the options, recorded on the
// earlier job and looked up for the later (Store.Reusable).

// ReuseScope is how far a transcript is reused (REUSE_SCOPE).
type ReuseScope string

// The scopes.
const (
	// ReusePayer reuses within one payer: an API token's jobs, or one
	// Telegram chat's.
	ReusePayer ReuseScope = "payer"
	// ReuseInstallation reuses across every payer: an instant answer then
	// tells a sender that someone sent the same recording before.
	ReuseInstallation ReuseScope = "installation"
	// ReuseOff never reuses.
	ReuseOff ReuseScope = "off"
)

// ParseReuseScope reads REUSE_SCOPE; empty is ReusePayer.
func ParseReuseScope(s string) (ReuseScope, error) {
	switch sc := ReuseScope(strings.ToLower(strings.TrimSpace(s))); sc {
	case "":
		return ReusePayer, nil
	case ReusePayer, ReuseInstallation, ReuseOff:
		return sc, nil
	}
	return "", fmt.Errorf("%q is not payer, installation or off", s)
}

// MediaOfTelegram is the recording of a Telegram file, named by its
// file_unique_id, which is the same for the same file whoever sends it.
func MediaOfTelegram(fileUniqueID string) string { return "tg-file:" + fileUniqueID }

// MediaOfBytes is the recording of uploaded bytes, named by their SHA-256.
func MediaOfBytes(sum [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(sum[:]) }

// ReuseKeyOf is j's reuse key in scope for the recording media (MediaOf…),
// recognized in language lang (j's, or the installation's default): a
// SHA-256 of the payer (an API job's payer, a Telegram job's chat) unless
// the scope is the installation, the recording and the options the
// transcript depends on (language, speakers, summary, deferred model).
// Empty, so never reused nor a source, when the scope is off, j asked for
// a fresh recognition (Features.NoReuse), or media is empty.
func ReuseKeyOf(scope ReuseScope, j Job, media, lang string) string {
	if scope == ReuseOff || scope == "" || j.Features.NoReuse || media == "" {
		return ""
	}
	payer := "*"
	if scope == ReusePayer {
		payer = j.ChargedTo
		if j.Source == SourceTelegram {
			payer = j.OwnerID
		}
		if payer == "" {
			return ""
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00speakers=%t\x00summary=%t\x00deferred=%t", payer, media,
		strings.ToLower(lang), j.Features.Speakers, j.Features.Summary, j.Priority == PriorityDeferred)
	return hex.EncodeToString(h.Sum(nil))
}

// MaxReuseKey is the length of a reuse key: a hex SHA-256.
const MaxReuseKey = 2 * sha256.Size

// ReuseKeyOfDraft is ReuseKeyOf for the job d makes, before it is made.
func ReuseKeyOfDraft(scope ReuseScope, d Draft, media, lang string) string {
	j := Job{Source: d.Source, OwnerID: d.OwnerID, ChargedTo: d.ChargedTo, Priority: d.Priority.normal(),
		Features: Features{Speakers: d.Speakers, Summary: d.Summary, NoReuse: d.NoReuse}}
	return ReuseKeyOf(scope, j, media, lang)
}
