package speechkit

import (
	"cmp"
	"strings"
)

// SummaryRequest asks a language model to summarize the recognized text
// (SpeechKit docs, "Using LLMs to process recognition results"); the model
// must be available in synchronous mode, the account needs
// ai.languageModels.user.
type SummaryRequest struct {
	ModelURI    string // "gpt://<folder id>/<model>/<version>"
	Instruction string // the prompt; SummaryInstruction gives the service's
}

// summaryInstructions are the general model's languages (speechkit/stt/models.md;
// pt-BR is only in general:rc), lower-case, each with its summary prompt in
// that language (docs/settings.md lists them; a test checks).
var summaryInstructions = map[string]string{
	"auto":  "Summarize this recording in a few sentences, in the language it is spoken in.",
	"de-de": "Fasse den Inhalt dieser Aufnahme in wenigen Sätzen zusammen.",
	"en-us": "Summarize this recording in a few sentences.",
	"es-es": "Resume el contenido de esta grabación en unas pocas frases.",
	"fi-fi": "Tiivistä tämän tallenteen sisältö muutamaan lauseeseen.",
	"fr-fr": "Résume le contenu de cet enregistrement en quelques phrases.",
	"he-he": "סכם את תוכן ההקלטה הזו בכמה משפטים.",
	"it-it": "Riassumi il contenuto di questa registrazione in poche frasi.",
	"kk-kz": "Осы жазбаның мазмұнын бірнеше сөйлеммен қысқаша баяндап бер.",
	"nl-nl": "Vat de inhoud van deze opname samen in een paar zinnen.",
	"pl-pl": "Streść treść tego nagrania w kilku zdaniach.",
	"pt-pt": "Resume o conteúdo desta gravação em poucas frases.",
	"ru-ru": "Кратко перескажи содержание этой записи в нескольких предложениях.",
	"sv-se": "Sammanfatta innehållet i den här inspelningen med några meningar.",
	"tr-tr": "Bu kaydın içeriğini birkaç cümleyle özetle.",
	"uz-uz": "Ushbu yozuvning mazmunini bir necha gap bilan qisqacha bayon qiling.",
}

// SummaryInstruction is the prompt for lang (empty is DefaultLanguage); an
// unknown language gets the "auto" prompt.
func SummaryInstruction(lang string) string {
	if s, ok := summaryInstructions[strings.ToLower(cmp.Or(lang, DefaultLanguage))]; ok {
		return s
	}
	return summaryInstructions[AutoLanguage]
}
