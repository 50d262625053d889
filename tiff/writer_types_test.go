package tiff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
)

// TestEveryBigTIFFTypeNeedsBigTIFF: each of the three BigTIFF-only types,
// not only AddUint's LONG8, makes BigTIFFAuto write BigTIFF and
// BigTIFFNever refuse the file with ErrTooLarge, as Close decides it; a
// writer that promoted on LONG8 alone chose classic TIFF for SLONG8 or
// IFD8 and then failed at Close with ifd's "value does not fit the format".
func TestEveryBigTIFFTypeNeedsBigTIFF(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name string
		e    ifd.Entry
	}{
		{"LONG8", ifd.Entry{Tag: 65000, Type: ifd.Long8, Count: 1, Value: le.AppendUint64(nil, 5)}},
		{"SLONG8", ifd.Entry{Tag: 65000, Type: ifd.SLong8, Count: 1, Value: le.AppendUint64(nil, uint64(1<<64-5))}}, // -5
		{"IFD8", ifd.Entry{Tag: 65000, Type: ifd.IFD8, Count: 1, Value: le.AppendUint64(nil, 16)}},
	}
	for _, tt := range tests {
		for _, choice := range []BigTIFF{BigTIFFAuto, BigTIFFNever} {
			t.Run(fmt.Sprintf("%s/%s", tt.name, map[BigTIFF]string{BigTIFFAuto: "auto", BigTIFFNever: "never"}[choice]), func(t *testing.T) {
				h := iohandle.NewMemory()
				w, err := NewWriter(h, Options{BigTIFF: choice})
				require.NoError(t, err)
				d := tinyDirectory(t, w)
				d.Fields.Add(tt.e)
				require.NoError(t, d.Fields.Err())
				require.NoError(t, w.AddDirectory(d))
				err = w.Close()
				if choice == BigTIFFNever {
					require.ErrorIs(t, err, ErrTooLarge)
					assert.ErrorContains(t, err, "tag 65000 has the BigTIFF type "+tt.name)
					return
				}
				require.NoError(t, err, "BigTIFFAuto")
				f, err := Read(bytes.NewReader(h.Bytes()), h.Len())
				require.NoError(t, err)
				assert.True(t, f.BigTIFF, "promoted to BigTIFF")
				got, ok := f.Pages[0].Field(65000)
				require.True(t, ok)
				assert.Equal(t, tt.e, got)
			})
		}
	}
}
