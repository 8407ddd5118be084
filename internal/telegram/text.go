package telegram

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	"transcriber/internal/job"
	"transcriber/internal/spend"
)

// lang is the replies' language: Russian for Russian and the languages
// whose users mostly read it, else English.
type lang string

const (
	en lang = "en"
	ru lang = "ru"
)

func langOf(code string) lang {
	code = strings.ToLower(code)
	for _, p := range []string{"ru", "uk", "be", "kk"} {
		if code == p || strings.HasPrefix(code, p+"-") {
			return ru
		}
	}
	return en
}

type text struct{ en, ru string }

func (t text) in(l lang) string {
	if l == ru {
		return t.ru
	}
	return t.en
}

func (t text) f(l lang, args ...any) string { return fmt.Sprintf(t.in(l), args...) }

var (
	txtReceived        = text{"Got it — transcribing…", "Принято — расшифровываю…"}
	txtConverting      = text{"Preparing the audio…", "Готовлю аудио…"}
	txtRecognizing     = text{"Recognizing speech…", "Распознаю речь…"}
	txtRecognizingLong = text{
		"Recognizing %s of audio; the transcript should be ready in about %s.",
		"Распознаю %s аудио; расшифровка будет готова примерно через %s.",
	}
	txtRecognizingDeferred = text{
		"Recognizing %s of audio in deferred mode: the transcript may take up to a day.",
		"Распознаю %s аудио в отложенном режиме: расшифровка может занять до суток.",
	}
	txtModeIs = text{
		"Recognition mode for this chat: %s. /mode deferred is cheaper for the service but takes up to a day; /mode normal takes minutes.",
		"Режим распознавания в этом чате: %s. /mode deferred дешевле для сервиса, но занимает до суток; /mode normal — минуты.",
	}
	txtModeSet    = text{"Recognition mode for this chat is now %s.", "Теперь режим распознавания в этом чате: %s."}
	txtModeBad    = text{"I don't know the mode %q. Use /mode normal or /mode deferred.", "Я не знаю режима %q. Используйте /mode normal или /mode deferred."}
	txtFeatureIs  = text{"%s for this chat: %s. Turn it on or off with /%s on or /%s off.", "%s в этом чате: %s. Включить или выключить: /%s on или /%s off."}
	txtFeatureSet = text{"%s for this chat: now %s.", "%s в этом чате: теперь %s."}
	txtFeatureBad = text{"Use /%s on or /%s off.", "Используйте /%s on или /%s off."}
	txtSpeakers   = text{
		"Who spoke (up to two speakers in a mono recording, one per channel in stereo)",
		"Кто говорит (до двух собеседников в моно-записи, по одному на канал в стерео)",
	}
	txtSummaryFeature = text{"A summary above the transcript of recordings over 2 minutes", "Краткое содержание над расшифровкой записей длиннее 2 минут"}
	txtFeatureOn      = text{"on", "включено"}
	txtFeatureOff     = text{"off", "выключено"}
	txtNoSummaries    = text{"Summaries are not set up on this installation.", "Краткое содержание здесь не настроено."}
	txtSummaryHead    = text{"Summary:", "Кратко:"}
	txtModeNormal     = text{"normal", "обычный"}
	txtModeDeferred   = text{"deferred (up to a day)", "отложенный (до суток)"}
	txtLongDone       = text{"Done: the transcript is in the file below.", "Готово: расшифровка в файле ниже."}
	txtNoSpeech       = text{"I heard no speech in this recording.", "В этой записи я не услышал речи."}
	txtRefusal        = text{
		"Sorry, this bot is private. Ask its owner to add your id (%d) to the allowed users. Until then I say this once a day and answer nothing else.",
		"Извините, это закрытый бот. Попросите владельца добавить ваш id (%d) в список разрешённых. До тех пор я говорю это раз в день и больше ничего не отвечаю.",
	}
	txtLink = text{
		"This file is %s — more than Telegram lets a bot download (%s). Upload it here instead; the link works for %s and only for this file:\n%s\nThe transcript will come to this chat.",
		"Файл весит %s — больше, чем Telegram разрешает скачать боту (%s). Загрузите его по ссылке; она действует %s и только для этого файла:\n%s\nРасшифровка придёт в этот чат.",
	}
	txtLinkUnsized = text{
		"This file is more than Telegram lets a bot download (%s). Upload it here instead; the link works for %s and only for this file:\n%s\nThe transcript will come to this chat.",
		"Файл больше, чем Telegram разрешает скачать боту (%s). Загрузите его по ссылке; она действует %s и только для этого файла:\n%s\nРасшифровка придёт в этот чат.",
	}
	txtTooLarge = text{"This file is %s; the largest file I take is %s.", "Файл весит %s; я принимаю файлы до %s."}
	txtNoLink   = text{
		"This file is %s — more than Telegram lets a bot download (%s), and uploads by link are not set up here. Send a shorter or smaller recording.",
		"Файл весит %s — больше, чем Telegram разрешает скачать боту (%s), а загрузка по ссылке здесь не настроена. Пришлите запись покороче или поменьше.",
	}
	txtNoLinkUnsized = text{
		"This file is more than Telegram lets a bot download (%s), and uploads by link are not set up here. Send a shorter or smaller recording.",
		"Файл больше, чем Telegram разрешает скачать боту (%s), а загрузка по ссылке здесь не настроена. Пришлите запись покороче или поменьше.",
	}
	txtNotMedia = text{"Reply /transcribe to a voice message, audio, video or a video note.", "Ответьте /transcribe на голосовое, аудио, видео или кружок."}
	txtHelp     = text{
		"I turn speech into text. Send or forward a voice message, audio, video, a video note, or an audio/video file.\n\n" +
			"• Short recordings come back in a few seconds, as a reply. Long ones come as a file (/formats: txt, srt or vtt).\n" +
			"• Files up to %s I fetch myself; for larger ones (up to %s) I give you a one-time upload link.\n" +
			"• Recognition language: %s (/lang to change it for this chat).\n" +
			"• In groups I transcribe voice messages when /auto is on, or when someone replies /transcribe to one.\n" +
			"• /usage shows how much you have used of your limits; /mode deferred recognizes this chat's recordings more cheaply, within a day.\n" +
			"• /translate en sends each transcript with its translation (any language code; /translate off stops it).\n" +
			"• /speakers on says who spoke; /summary on adds a short summary above the transcript of a long recording.\n\n" +
			"Privacy: your files and transcripts are kept only to do the work and are deleted after a few days. /forget deletes everything of this chat now.",
		"Я превращаю речь в текст. Пришлите или перешлите голосовое, аудио, видео, кружок или аудио/видеофайл.\n\n" +
			"• Короткие записи возвращаются через несколько секунд ответом. Длинные — файлом (/formats: txt, srt или vtt).\n" +
			"• Файлы до %s я скачиваю сам; для больших (до %s) дам одноразовую ссылку для загрузки.\n" +
			"• Язык распознавания: %s (/lang меняет его для этого чата).\n" +
			"• В группах я расшифровываю голосовые, когда включён /auto, или когда кто-то отвечает /transcribe на сообщение.\n" +
			"• /usage покажет, сколько из ваших лимитов уже израсходовано; /mode deferred распознаёт записи этого чата дешевле, в течение суток.\n" +
			"• /translate en присылает каждую расшифровку с переводом (любой код языка; /translate off — выключить).\n" +
			"• /speakers on покажет, кто говорит; /summary on добавит краткое содержание над расшифровкой длинной записи.\n\n" +
			"Приватность: файлы и расшифровки хранятся только для работы и удаляются через несколько дней. /forget удаляет всё из этого чата сразу.",
	}
	txtLangIs = text{
		"Recognition language for this chat: %s. Change it with /lang <code>, e.g. /lang en-US; /lang default goes back to %s.",
		"Язык распознавания в этом чате: %s. Сменить: /lang <код>, например /lang en-US; /lang default вернёт %s.",
	}
	txtLangSet = text{"Recognition language for this chat is now %s.", "Теперь язык распознавания в этом чате: %s."}
	txtLangBad = text{
		"I don't know the language %q. Try a code such as ru-RU, en-US, de-DE, or auto.",
		"Я не знаю языка %q. Попробуйте код вроде ru-RU, en-US, de-DE или auto.",
	}
	txtFormats   = text{"Long transcripts come as a file. Its format now: %s. Choose:", "Длинные расшифровки приходят файлом. Сейчас формат: %s. Выберите:"}
	txtFormatSet = text{"Long transcripts will come as %s.", "Длинные расшифровки будут приходить в формате %s."}
	txtAutoIs    = text{
		"Automatic transcription in this chat is %s. /auto on or /auto off changes it.",
		"Автоматическая расшифровка в этом чате: %s. /auto on или /auto off меняет это.",
	}
	txtOn      = text{"on", "включена"}
	txtOff     = text{"off", "выключена"}
	txtForgetQ = text{
		"Delete all of this chat's recordings, transcripts and jobs? This cannot be undone.",
		"Удалить все записи, расшифровки и задания этого чата? Это необратимо.",
	}
	txtForgetYes     = text{"Yes, delete", "Да, удалить"}
	txtForgetNo      = text{"Cancel", "Отмена"}
	txtForgotten     = text{"Deleted: %d jobs with their files, and this chat's settings.", "Удалено: заданий — %d, с их файлами, и настройки чата."}
	txtCancelled     = text{"Nothing was deleted.", "Ничего не удалено."}
	txtNotYours      = text{"Only the one who sent /forget can answer this.", "Ответить может только тот, кто отправил /forget."}
	txtOldButton     = text{"This button is out of date. Send /forget again.", "Эта кнопка устарела. Отправьте /forget ещё раз."}
	txtTooManyActive = text{
		"You have %d recordings in progress, the most I take at once. Send this one again when one of them is done.",
		"Записей у вас в работе: %d — больше сразу я не беру. Пришлите эту ещё раз, когда одна из них будет готова.",
	}
	txtUsageDay   = text{"Today: %s billed of %s (%s of audio; resets %s).", "Сегодня: оплачено %s из %s (%s аудио; лимит обновится %s)."}
	txtUsageMonth = text{
		"This month, the whole service: %s billed of %s (%s of audio; resets %s).",
		"В этом месяце на весь сервис: оплачено %s из %s (%s аудио; лимит обновится %s).",
	}
	txtUsageBilled     = text{"SpeechKit bills at least 15 s a recording.", "SpeechKit берёт оплату минимум за 15 с на запись."}
	txtUsageActive     = text{"Recordings in progress: %d of %s at once.", "Записей в работе: %d из %s одновременно."}
	txtNoLimit         = text{"no limit", "без ограничения"}
	txtTranslateButton = text{"Translate", "Перевести"}
	txtNoTranslation   = text{"Translation is not set up on this bot.", "Перевод в этом боте не настроен."}
	txtTranslateIs     = text{
		"Each transcript comes with its translation into %s. /translate off stops it.",
		"Каждая расшифровка приходит с переводом на %s. /translate off — выключить.",
	}
	txtTranslateOff = text{
		"Transcripts come without a translation. /translate en (or another language code) adds one.",
		"Расшифровки приходят без перевода. /translate en (или другой код языка) — добавить перевод.",
	}
	txtTranslateBad = text{
		"%q is not a language code: /translate en, /translate de, or /translate off.",
		"%q — не код языка: /translate en, /translate de или /translate off.",
	}
	txtTranslating       = text{"Translating…", "Перевожу…"}
	txtTranslationHead   = text{"Translation (%s):", "Перевод (%s):"}
	txtTranslationFailed = text{
		"I could not translate this transcript into %s: %s. The transcript above stands.",
		"Не удалось перевести расшифровку на %s: %s. Сама расшифровка выше.",
	}
	txtUnknownCmd = text{"I don't know that command. /help lists what I do.", "Такой команды я не знаю. /help — что я умею."}
)

// failureText says what went wrong and what to do, by the job's code.
func failureText(l lang, j job.Job) string {
	if j.ErrorCode == spend.CodeQuotaExceeded {
		return text{"I did not transcribe this recording: the recognition limit would be passed (%s).",
			"Запись не расшифрована: лимит распознавания был бы превышен (%s)."}.f(l, j.ErrorMessage)
	}
	if t, ok := failures[j.ErrorCode]; ok {
		return t.in(l)
	}
	return text{"I could not transcribe this recording: %s. Please try again later.", "Не удалось расшифровать запись: %s. Попробуйте позже ещё раз."}.f(l,
		cmp.Or(j.ErrorMessage, j.ErrorCode))
}

var failures = map[string]text{
	spend.CodeBudgetExceeded: {
		"I did not transcribe this recording: this month's budget for the service is spent. The owner can raise it; then send the recording again.",
		"Запись не расшифрована: бюджет сервиса на этот месяц исчерпан. Владелец может его увеличить — тогда пришлите запись ещё раз.",
	},
	"upload_missing": {"The file never reached me. Please send it again.", "Файл до меня не дошёл. Пришлите его ещё раз."},
	"empty_file":     {"The file is empty.", "Файл пустой."},
	"too_large":      {"The file is larger than I take.", "Файл больше, чем я принимаю."},
	"size_mismatch": {
		"The uploaded file is not the one you sent me. Open the link again and pick the same file.",
		"Загружен не тот файл, что вы прислали. Откройте ссылку ещё раз и выберите тот же файл.",
	},
	"no_audio_stream":  {"There is no sound in this file.", "В этом файле нет звука."},
	"unreadable_media": {"This file is not audio or video I can read.", "Этот файл — не аудио и не видео, которое я могу прочитать."},
	"unsupported_media": {
		"I do not take files of this type. Send a voice message, or audio or video as OGG, MP3, WAV, FLAC, M4A/MP4, WebM/MKV, AAC or AMR.",
		"Файлы такого типа я не принимаю. Пришлите голосовое сообщение или аудио и видео в OGG, MP3, WAV, FLAC, M4A/MP4, WebM/MKV, AAC или AMR.",
	},
	"too_long": {
		"The recording is longer than I take. Cut it into parts and send them one by one.",
		"Запись длиннее, чем я принимаю. Разрежьте её на части и пришлите по одной.",
	},
	"audio_over_reservation": {
		"This file holds more audio than it says it lasts, so I did not transcribe it. Save it again in an audio editor and send it once more.",
		"В этом файле больше звука, чем указано в нём самом, поэтому я его не расшифровал. Пересохраните его в аудиоредакторе и пришлите ещё раз.",
	},
	"audio_too_large_for_request": {
		"The recording is too large to send to the speech recognizer in one request. Send a shorter one, or cut it into parts.",
		"Запись слишком велика, чтобы отправить её распознавателю одним запросом. Пришлите запись покороче или разрежьте её на части.",
	},
	"recognizer_answer_too_large": {
		"The speech recognizer's answer for this recording is larger than I can receive. Cut the recording into parts and send them one by one.",
		"Ответ распознавателя на эту запись больше, чем я могу принять. Разрежьте запись на части и пришлите по одной.",
	},
	"recognition_not_configured": {
		"Speech recognition is not set up on this installation yet. Tell the bot's owner.",
		"Распознавание речи здесь ещё не настроено. Сообщите владельцу бота.",
	},
	"attempts_exhausted": {
		"Something kept failing on my side. Please send the recording again later.",
		"У меня что-то раз за разом ломалось. Пришлите запись ещё раз позже.",
	},
}

func usageText(l lang, u spend.Usage) string {
	limit := func(n int64) string {
		if n <= 0 {
			return txtNoLimit.in(l)
		}
		return humanSeconds(l, n)
	}
	active := txtNoLimit.in(l)
	if u.ActiveLimit > 0 {
		active = fmt.Sprint(u.ActiveLimit)
	}
	return strings.Join([]string{
		txtUsageDay.f(l, humanSeconds(l, u.Day.UsedSeconds), limit(u.Day.LimitSeconds), humanSeconds(l, u.Day.AudioSeconds), humanReset(l, u.Day.ResetsAt)),
		txtUsageMonth.f(l, humanSeconds(l, u.Month.UsedSeconds), limit(u.Month.LimitSeconds), humanSeconds(l, u.Month.AudioSeconds), humanReset(l, u.Month.ResetsAt)),
		txtUsageActive.f(l, u.ActiveJobs, active),
		txtUsageBilled.in(l),
	}, "\n")
}

// humanSeconds writes "2 h 10 min", "2 ч 10 мин".
func humanSeconds(l lang, n int64) string {
	s := spend.Human(n)
	if l == ru {
		s = strings.NewReplacer(" min", " мин", " h", " ч", " s", " с").Replace(s)
	}
	return s
}

// humanReset writes "at 00:00 UTC" tomorrow, "on 1 Jan 2026, 00:00 UTC".
func humanReset(l lang, at time.Time) string {
	layout := text{"at 15:04 UTC", "в 15:04 UTC"}
	if at.UTC().Day() == 1 {
		layout = text{"on 2 Jan 2006, 15:04 UTC", "02.01.2006 в 15:04 UTC"}
	}
	return at.UTC().Format(layout.in(l))
}

const (
	longWait = 10 * time.Minute // past it the status estimates the wait
	// secondsPerMinute is SpeechKit's time for a minute of audio in normal
	// mode (docs/settings.md).
	secondsPerMinute = 10
)

// recognizingText gives a deferred job's length, or a long one's with the
// estimated wait rounded up to a minute.
func recognizingText(j job.Job, l lang) string {
	secs := spend.Seconds(j.DurationMs)
	switch {
	case secs == 0:
		return txtRecognizing.in(l)
	case j.Deferred():
		return txtRecognizingDeferred.f(l, humanSeconds(l, secs))
	case time.Duration(j.DurationMs)*time.Millisecond > longWait:
		est := (secs*secondsPerMinute/60 + 59) / 60 * 60
		return txtRecognizingLong.f(l, humanSeconds(l, secs), humanSeconds(l, est))
	}
	return txtRecognizing.in(l)
}

// humanBytes writes 20 MB, 1.5 GB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<30)), ".0") + " GB"
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MB"
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// clip is s cut to at most n characters, with "…" when it was cut.
func clip(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at] + "…"
		}
		i++
	}
	return s
}

// utf16Len is s's length in UTF-16 code units, the Bot API's unit; a
// byte that is not UTF-8 counts one, as its U+FFFD.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// prefixUTF16 is s's longest prefix within limit UTF-16 code units.
func prefixUTF16(s string, limit int) string {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > limit {
			return s[:i]
		}
		n += w
	}
	return s
}
