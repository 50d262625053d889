package ifd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Uints returns the values of an unsigned integer field (BYTE, SHORT,
// LONG, LONG8, IFD, IFD8).
func (e Entry) Uints() ([]uint64, error) {
	size := e.Type.Size()
	switch e.Type {
	case Byte, Short, Long, Long8, IFD, IFD8:
	default:
		return nil, fmt.Errorf("%w: tag %d is %v, not unsigned", ErrType, e.Tag, e.Type)
	}
	v := make([]uint64, 0, len(e.Value)/size)
	for p := e.Value; len(p) >= size; p = p[size:] {
		switch size {
		case 1:
			v = append(v, uint64(p[0]))
		case 2:
			v = append(v, uint64(binary.LittleEndian.Uint16(p)))
		case 4:
			v = append(v, uint64(binary.LittleEndian.Uint32(p)))
		default:
			v = append(v, binary.LittleEndian.Uint64(p))
		}
	}
	return v, nil
}

// Uint returns the first value of an unsigned integer field.
func (e Entry) Uint() (uint64, error) {
	v, err := e.Uints()
	if err != nil {
		return 0, err
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("%w: tag %d", ErrEmpty, e.Tag)
	}
	return v[0], nil
}

// Text returns an ASCII field's text without the terminating NUL(s).
func (e Entry) Text() (string, error) {
	if e.Type != ASCII {
		return "", fmt.Errorf("%w: tag %d is %v, not ASCII", ErrType, e.Tag, e.Type)
	}
	return string(bytes.TrimRight(e.Value, "\x00")), nil
}

// Floats returns the values of any numeric field as float64: integers,
// RATIONALs (as quotients) and floating-point values.
func (e Entry) Floats() ([]float64, error) {
	size := e.Type.Size()
	if size == 0 || e.Type == ASCII || e.Type == Undefined {
		return nil, fmt.Errorf("%w: tag %d is %v, not numeric", ErrType, e.Tag, e.Type)
	}
	v := make([]float64, 0, len(e.Value)/size)
	for p := e.Value; len(p) >= size; p = p[size:] {
		v = append(v, e.Type.float(p))
	}
	return v, nil
}

// float converts one little-endian value of t.
func (t Type) float(p []byte) float64 {
	le := binary.LittleEndian
	switch t {
	case Byte:
		return float64(p[0])
	case SByte:
		return float64(int8(p[0]))
	case Short:
		return float64(le.Uint16(p))
	case SShort:
		return float64(int16(le.Uint16(p)))
	case Long, IFD:
		return float64(le.Uint32(p))
	case SLong:
		return float64(int32(le.Uint32(p)))
	case Long8, IFD8:
		return float64(le.Uint64(p))
	case SLong8:
		return float64(int64(le.Uint64(p)))
	case Rational:
		return float64(le.Uint32(p)) / float64(le.Uint32(p[4:]))
	case SRational:
		return float64(int32(le.Uint32(p))) / float64(int32(le.Uint32(p[4:])))
	case Float:
		return float64(math.Float32frombits(le.Uint32(p)))
	default: // Double
		return math.Float64frombits(le.Uint64(p))
	}
}
