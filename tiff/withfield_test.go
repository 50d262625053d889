package tiff

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// TestWithFieldKeepsTagsSorted: a field WithField adds goes where its tag
// sorts, before, between or after the page's own (TIFF asks for fields in
// ascending tag order, and a page's fields may be handed on to a Builder
// or a writer as they are); a field replaced stays where it was.
func TestWithFieldKeepsTagsSorted(t *testing.T) {
	p := stackPage(t, 16, 5, 2, []uint32{4096, 4128, 4160}, 4200)
	tags := func(fields []ifd.Entry) []uint16 {
		var v []uint16
		for _, e := range fields {
			v = append(v, e.Tag)
		}
		return v
	}
	require.True(t, slices.IsSorted(tags(p.Fields)), "the page's own fields: %v", tags(p.Fields))
	tests := []struct {
		name  string
		tag   uint16
		added bool
	}{
		{"before every field", TagNewSubfileType, true},
		{"between fields", TagSamplesPerPixel, true},
		{"after every field", TagSampleFormat, true},
		{"private, last", 50000, true},
		{"replaced", TagBitsPerSample, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ifd.Entry{Tag: tt.tag, Type: ifd.Short, Count: 1, Value: []byte{1, 0}}
			q, err := p.WithField(e)
			require.NoError(t, err)
			want := tags(p.Fields)
			if tt.added {
				want = append(want, tt.tag)
				slices.Sort(want)
			}
			assert.Equal(t, want, tags(q.Fields))
			got, ok := q.Field(tt.tag)
			require.True(t, ok)
			assert.Equal(t, e, got)
		})
	}
}
