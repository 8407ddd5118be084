package translate

import (
	"slices"

	"transcriber/internal/errs"
)

// languages are translate/concepts/supported-languages.md's codes, sorted.
var languages = []string{
	"af", "am", "ar", "az", "ba", "be", "bg", "bn", "bs", "ca", "ceb", "cs", "cv", "cy", "da", "de",
	"el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga", "gd", "gl", "gu", "he", "hi", "hr",
	"ht", "hu", "hy", "id", "is", "it", "ja", "jv", "ka", "kazlat", "kk", "km", "kn", "ko", "ky", "la",
	"lb", "lo", "lt", "lv", "mg", "mhr", "mi", "mk", "ml", "mn", "mr", "mrj", "ms", "mt", "my", "ne",
	"nl", "no", "pa", "pap", "pl", "pt", "ro", "ru", "sah", "si", "sk", "sl", "sq", "sr", "su", "sv",
	"sw", "ta", "te", "tg", "th", "tl", "tr", "tt", "udm", "uk", "ur", "uz", "uzbcyr", "vi", "xh", "yi",
	"zh", "zu",
}

// Supported reports whether code is listed. The client itself sends any
// well-formed code, so a language the API adds later works.
func Supported(code string) bool {
	_, ok := slices.BinarySearch(languages, normalize(code))
	return ok
}

// wellFormed: 2 to 8 ASCII lower-case letters ("en", "sah", "kazlat").
func wellFormed(code string) bool {
	if len(code) < 2 || len(code) > 8 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < 'a' || code[i] > 'z' {
			return false
		}
	}
	return true
}

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
