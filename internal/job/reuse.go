package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// A later job of the same recording and options, within a scope, ends done
// at once with a copy of an earlier transcript (package pipeline); they
// meet by ReuseKey (Store.Reusable).

// ReuseScope is REUSE_SCOPE.
type ReuseScope string

const (
	ReusePayer ReuseScope = "payer" // an API token's, or a Telegram chat's
	// ReuseInstallation: an instant answer tells a sender someone sent the same before.
	ReuseInstallation ReuseScope = "installation"
	ReuseOff          ReuseScope = "off"
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

// MediaOfTelegram names a file by file_unique_id, the same whoever sends it.
func MediaOfTelegram(fileUniqueID string) string { return "tg-file:" + fileUniqueID }

func MediaOfBytes(sum [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(sum[:]) }

// ReuseKeyOf hashes the payer (unless installation-wide), the recording
// (MediaOf…) and the options the transcript depends on; empty when off,
// NoReuse, or no media.
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

// MaxReuseKey is a hex SHA-256.
const MaxReuseKey = 2 * sha256.Size

// ReuseKeyOfDraft is ReuseKeyOf for the job d makes.
func ReuseKeyOfDraft(scope ReuseScope, d Draft, media, lang string) string {
	j := Job{Source: d.Source, OwnerID: d.OwnerID, ChargedTo: d.ChargedTo, Priority: d.Priority.normal(),
		Features: Features{Speakers: d.Speakers, Summary: d.Summary, NoReuse: d.NoReuse}}
	return ReuseKeyOf(scope, j, media, lang)
}
