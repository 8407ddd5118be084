package speechkit

import "strings"

// SummaryRequest asks SpeechKit to have a language model summarize the
// recognized text along with the recognition (RecognizeFileRequest's
// summarization; SpeechKit docs, "Using LLMs to process recognition
// results"). The model must be one available in synchronous mode, and the
// caller's account needs the ai.languageModels.user role.
type SummaryRequest struct {
	// ModelURI names the model, "gpt://<folder id>/<model>/<version>".
	ModelURI string
	// Instruction is the prompt; SummaryInstruction gives the service's.
	Instruction string
}

// summaryInstructions are the prompts for a summary, one per recognition
// language, each written in that language (docs/settings.md lists them,
// and a test checks it does). The key is the lower-case language code.
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

// SummaryInstruction is the service's prompt for a summary of a recording
// in language lang (a code ValidLanguage accepts; empty is
// DefaultLanguage), written in that language. An unknown language gets the
// "auto" prompt, which asks for the recording's own language.
func SummaryInstruction(lang string) string {
	if lang == "" {
		lang = DefaultLanguage
	}
	if s, ok := summaryInstructions[strings.ToLower(lang)]; ok {
		return s
	}
	return summaryInstructions[AutoLanguage]
}
