package translate

import (
	"slices"

	"transcriber/internal/errs"
)

// languages are the codes of the languages Translate supports, as listed in
// translate/concepts/supported-languages.md, sorted.
var languages = []string{
	"af", "am", "ar", "az", "ba", "be", "bg", "bn", "bs", "ca", "ceb", "cs", "cv", "cy", "da", "de",
	"el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga", "gd", "gl", "gu", "he", "hi", "hr",
	"ht", "hu", "hy", "id", "is", "it", "ja", "jv", "ka", "kazlat", "kk", "km", "kn", "ko", "ky", "la",
	"lb", "lo", "lt", "lv", "mg", "mhr", "mi", "mk", "ml", "mn", "mr", "mrj", "ms", "mt", "my", "ne",
	"nl", "no", "pa", "pap", "pl", "pt", "ro", "ru", "sah", "si", "sk", "sl", "sq", "sr", "su", "sv",
	"sw", "ta", "te", "tg", "th", "tl", "tr", "tt", "udm", "uk", "ur", "uz", "uzbcyr", "vi", "xh", "yi",
	"zh", "zu",
}

// Languages are the codes of the languages the documentation lists, sorted:
// the ones to offer a person. The client sends any code of the right shape,
// so a language added to the API later works before it is added here.
func Languages() []string { return slices.Clone(languages) }

// Supported reports whether code (as Translate normalizes it: trimmed, lower
// case) is one the documentation lists.
func Supported(code string) bool {
	_, ok := slices.BinarySearch(languages, normalize(code))
	return ok
}

// maxCodeLen is the longest code taken: the list's longest is 6 ("kazlat").
const maxCodeLen = 8

// wellFormed reports whether code looks like a language code: 2 to 8 ASCII
// lower-case letters (ISO 639-1 "en", ISO 639-3 "sah", the list's own
// "kazlat").
func wellFormed(code string) bool {
	if len(code) < 2 || len(code) > maxCodeLen {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < 'a' || code[i] > 'z' {
			return false
		}
	}
	return true
}

// checkLanguages refuses, before anything is sent, a target that is missing
// or not shaped like a language code, and such a source ("" is detection).
func checkLanguages(target, source string) error {
	switch {
	case target == "":
		return errs.New(errs.Invalid, CodeInvalid, "no language to translate into")
	case !wellFormed(target):
		return errs.New(errs.Invalid, CodeInvalid, "the language to translate into is not a language code")
	case source != "" && !wellFormed(source):
		return errs.New(errs.Invalid, CodeInvalid, "the language to translate from is not a language code")
	}
	return nil
}
