package lean4export

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape renders a string read from an export, a lock or the command
// line for a human-readable line of output, so that no input can move the
// cursor, recolour or clear the terminal, reorder the text around it, or
// forge a line of its own. Printable runes (unicode.IsPrint: letters,
// marks, numbers, punctuation, symbols and the ASCII space) are kept, so
// Lean names such as α or «x.y» print as themselves; everything else is
// spelled as a Go-style escape:
//
//   - the backslash itself as \\ (so that the escaping is unambiguous);
//   - \n, \r and \t by name;
//   - other C0 controls, DEL and the C1 controls (ESC = \x1b, NUL = \x00,
//     CSI = \u009b) as \xNN or \u00NN;
//   - format characters (category Cf: the bidi embeddings, overrides and
//     isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F
//     and U+061C, zero-width characters, the BOM), line and paragraph
//     separators, non-ASCII spaces, private-use, surrogate and unassigned
//     code points as \uXXXX or \UXXXXXXXX;
//   - a byte that is not valid UTF-8 as \xNN.
//
// Escape is injective (distinct inputs print distinctly) and its output
// is printable ASCII plus printable non-ASCII runes, with no newline.
func Escape(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !printable(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !printable(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case !printable(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// printable: kept as itself by Escape.
func printable(r rune) bool {
	return unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)
}

// safe reports whether Escape(s) == s.
func safe(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r == '\\' || !printable(r) {
			return false
		}
		i += n
	}
	return true
}

// Printable reports whether s is valid UTF-8 made of runes Escape keeps as
// themselves (a backslash counts as printable here): a message that is
// already safe to print, such as one whose names were escaped when it was
// made, and that must not be escaped a second time.
func Printable(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || !printable(r) {
			return false
		}
		i += n
	}
	return true
}

// EscapeError returns err itself when its message is Printable (the
// messages of this package escape the names they quote), else an error
// whose message is Escape of err's: a message that quotes a name or path
// from the input keeps no control character.
func EscapeError(err error) error {
	if err == nil || Printable(err.Error()) {
		return err
	}
	return errors.New(Escape(err.Error()))
}
