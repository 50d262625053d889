package synth

import "math"

// Lookup tables, computed once at package initialisation so that generation
// itself needs no floating point.

const (
	profileSize = 1024         // entries of the nucleus profile over d²/r² in [0, 1)
	noiseLevels = 1 << 16 >> 6 // noise amplitudes, one per 64 counts of signal
	odLevels    = 4096         // optical densities 0..4 in steps of 1/1024

	readNoise    = 3.0  // counts, standard deviation of the camera read noise
	shotGain     = 0.55 // counts² of shot-noise variance per count of signal
	normalLevels = 4096 // quantiles of the standard normal distribution
	normalStd    = 256  // the unit of normal: one standard deviation
)

var (
	// fade[s][f] is the smoothstep weight, 0..256, of offset f inside a
	// lattice cell of 1<<s pixels.
	fade = [9][]int32{2: fadeTable(2), 4: fadeTable(4), 6: fadeTable(6), 8: fadeTable(8)}

	// direction holds 64 unit vectors (cos, sin) of a half circle, 8-bit
	// fixed point, for the orientation of elongated nuclei.
	direction = directionTable()

	// profile is the nucleus intensity, 0..256, over d²/r²: a shallow dome
	// whose rim falls off smoothly over the outer quarter.
	profile = profileTable()

	// tissueCurve maps tissue density (0..fieldMax in steps of 128) to
	// counts: a soft threshold, so tissue forms patches with smooth edges.
	tissueCurve = tissueTable()

	// normal holds normalLevels equally likely values of a normal
	// distribution with standard deviation normalStd: indexed by uniform
	// random bits it gives normal noise.
	normal = normalTable()

	// noiseScale[s] scales normal to the noise standard deviation at signal
	// s*64 counts, 16-bit fixed point.
	noiseScale = noiseTable()

	// gray8Curve maps 16-bit counts (in steps of 16) to 8-bit display
	// values through a square root that saturates at 16384 counts.
	gray8Curve = gray8Table()

	// transmission maps optical density (steps of 1/1024) to the 8-bit
	// brightness, 3..238, of transmitted light on slightly tinted glass.
	transmission = transmissionTable()

	// stainH and stainE are the optical densities per 10,000 counts of the
	// nuclear stain and per 4,200 counts of tissue stain in R, G and B
	// (haematoxylin and eosin), scaled so that (counts*stain)>>16 indexes
	// transmission.
	stainH = stainVector(0.65, 0.70, 0.29, 10000)
	stainE = stainVector(0.07, 0.99, 0.11, tissueMax*3)
)

func fadeTable(shift uint) []int32 {
	n := 1 << shift
	t := make([]int32, n)
	for i := range t {
		f := float64(i) / float64(n)
		t[i] = int32(math.Round(256 * f * f * (3 - 2*f)))
	}
	return t
}

func directionTable() (t [64][2]int64) {
	for i := range t {
		a := math.Pi * float64(i) / 64
		t[i] = [2]int64{int64(math.Round(256 * math.Cos(a))), int64(math.Round(256 * math.Sin(a)))}
	}
	return t
}

func profileTable() (t [profileSize]int32) {
	for i := range t {
		f := float64(i) / profileSize
		rim := 1.0
		if f > 0.75 {
			e := (f - 0.75) / 0.25
			rim = 1 - e*e*(3-2*e)
		}
		t[i] = int32(math.Round(256 * (1 - 0.3*f) * rim))
	}
	return t
}

func tissueTable() (t [256]int32) {
	for i := range t {
		f := float64(i) / (fieldMax >> 7)
		e := math.Min(math.Max((f-0.35)/0.45, 0), 1)
		t[i] = int32(math.Round(tissueMax * e * e * (3 - 2*e)))
	}
	return t
}

func noiseTable() (t [noiseLevels]int32) {
	for i := range t {
		signal := math.Max(float64(i*64+32)-background, 0)
		std := math.Sqrt(readNoise*readNoise + shotGain*signal)
		t[i] = int32(math.Round(std / normalStd * 65536))
	}
	return t
}

func gray8Table() (t [4096]uint8) {
	for i := range t {
		t[i] = uint8(math.Min(255, math.Round(255*math.Sqrt(float64(i*16)/16384))))
	}
	return t
}

func transmissionTable() (t [odLevels]int32) {
	for i := range t {
		t[i] = int32(math.Max(3, math.Round(238*math.Exp(-float64(i)/1024*math.Ln10))))
	}
	return t
}

func stainVector(r, g, b, counts float64) (v [3]int32) {
	for c, od := range [3]float64{r, g, b} {
		v[c] = int32(math.Round(od * 1024 * 65536 / counts))
	}
	return v
}

// mix is the splitmix64 finaliser: a fast, well-distributed 64-bit hash.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// hash3 hashes a layer and a 2-D integer coordinate under key.
func hash3(key, layer uint64, x, y int) uint64 {
	return mix(key + layer*0xa0761d6478bd642f + uint64(x)*0x9e3779b97f4a7c15 + uint64(y)*0xc2b2ae3d27d4eb4f)
}

// latticeValue is the value-noise lattice value, 0..255, at (i, j).
func latticeValue(key uint64, i, j int) int32 {
	return int32(mix(key+uint64(i)*0x9e3779b97f4a7c15+uint64(j)*0xc2b2ae3d27d4eb4f) >> 56)
}

func normalTable() (t [normalLevels]int32) {
	for i := range t {
		p := (float64(i) + 0.5) / normalLevels
		t[i] = int32(math.Round(normalStd * math.Sqrt2 * math.Erfinv(2*p-1)))
	}
	return t
}
