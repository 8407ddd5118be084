package telegram

// Caption is caption, for the tests of its cuts.
var Caption = caption
