package pyramid

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkTags checks what encoding/xml lets pass in the writer's OME-XML:
// in every tag, a space before each attribute and each namespace
// declaration. (The writer escapes '<', '>' and '"' in text and values,
// so tags and values are found by these characters alone.)
func checkTags(t testing.TB, out []byte) {
	t.Helper()
	for rest := out; ; {
		open := bytes.IndexByte(rest, '<')
		if open < 0 {
			return
		}
		end := bytes.IndexByte(rest[open:], '>')
		require.GreaterOrEqual(t, end, 0, "unterminated tag")
		tag := rest[open : open+end+1]
		inValue := false
		for i, c := range tag {
			if c != '"' {
				continue
			}
			if inValue && i+1 < len(tag) && !bytes.ContainsRune([]byte(" />?"), rune(tag[i+1])) {
				t.Fatalf("no space after an attribute in %s", tag)
			}
			inValue = !inValue
		}
		rest = rest[open+end+1:]
	}
}
