package compress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/ctxtest"
	"github.com/ometiff-go/ometiff/tiff"
)

// pipelineTiles returns tiles of mixed sizes and contents, with the encoder
// for each.
func pipelineTiles(n int) (tiles [][]byte, encoders []Encoder) {
	sizes := []int{16, 64, 128}
	slide := map[int][][]byte{}
	for _, s := range sizes {
		slide[s] = slideTiles(4, s)
	}
	codecs := testCodecs()
	for i := range n {
		s := sizes[i%len(sizes)]
		tiles = append(tiles, slide[s][i%4])
		codec, predictor := codecs[i%len(codecs)], tiff.PredictorHorizontal
		if codec.Compression() == tiff.CompressionNone {
			predictor = tiff.PredictorNone
		}
		encoders = append(encoders, &TileEncoder{Codec: codec, Predictor: predictor, Format: Format{BitsPerSample: 16}, Width: s})
	}
	return tiles, encoders
}

// runPipeline submits the tiles and returns copies of the encoded tiles in
// the order the consumer received them.
func runPipeline(t *testing.T, opts Options, tiles [][]byte, encoders []Encoder) [][]byte {
	t.Helper()
	var got [][]byte
	p := NewPipeline(context.Background(), opts, func(seq int64, encoded []byte) error {
		if seq != int64(len(got)) {
			return fmt.Errorf("tile %d delivered as %d", len(got), seq)
		}
		got = append(got, bytes.Clone(encoded))
		return nil
	})
	for i, tile := range tiles {
		buf := p.Buffer(len(tile))
		copy(buf, tile)
		require.NoError(t, p.Submit(encoders[i], buf))
	}
	require.NoError(t, p.Close())
	return got
}

func TestPipelineOrderAndIdentity(t *testing.T) {
	tiles, encoders := pipelineTiles(150)
	want := make([][]byte, len(tiles))
	for i, tile := range tiles {
		var err error
		want[i], err = encoders[i].Encode(nil, tile)
		require.NoError(t, err)
	}
	for _, workers := range []int{1, 2, 8} {
		for _, batch := range []int{1, 10 << 10, 0} {
			t.Run(fmt.Sprintf("workers=%d/batch=%d", workers, batch), func(t *testing.T) {
				got := runPipeline(t, Options{Workers: workers, BatchBytes: batch}, tiles, encoders)
				require.Equal(t, len(want), len(got))
				for i := range want {
					require.True(t, bytes.Equal(want[i], got[i]), "tile %d differs", i)
				}
			})
		}
	}
}

// TestPipelineDefaultWorkers checks that Workers 0 runs GOMAXPROCS
// workers: it submits more one-tile jobs than that to an encoder that holds
// every call, waits until every goroutine is blocked, and counts the calls
// held, one per worker.
func TestPipelineDefaultWorkers(t *testing.T) {
	for _, procs := range []int{2, 3} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			synctest.Test(t, func(t *testing.T) {
				enc := &heldEncoder{release: make(chan struct{})}
				p := NewPipeline(context.Background(), Options{BatchBytes: 1}, nil)
				for range 2 * procs {
					require.NoError(t, p.Submit(enc, p.Buffer(8)))
				}
				synctest.Wait() // every worker holds a call, or waits for one
				assert.Equal(t, int64(procs), enc.calls.Load(), "calls held at once")
				close(enc.release)
				require.NoError(t, p.Close())
				assert.Equal(t, int64(2*procs), enc.calls.Load())
			})
		})
	}
}

// heldEncoder stores tiles unchanged once release is closed.
type heldEncoder struct {
	calls   atomic.Int64
	release chan struct{}
}

func (h *heldEncoder) Encode(dst, src []byte) ([]byte, error) {
	h.calls.Add(1)
	<-h.release
	return append(dst, src...), nil
}

// TestPipelineBoundsBytesInFlight checks that Submit waits while the raw
// bytes submitted but not consumed would pass MaxInFlightBytes.
func TestPipelineBoundsBytesInFlight(t *testing.T) {
	const tile, limit = 1000, 5000
	var consumed atomic.Int64
	p := NewPipeline(context.Background(), Options{Workers: 2, MaxInFlightBytes: limit, BatchBytes: 1}, func(int64, []byte) error {
		time.Sleep(time.Millisecond) // a slow consumer
		consumed.Add(tile)
		return nil
	})
	for i := range 40 {
		require.NoError(t, p.Submit(noneCodec{}, p.Buffer(tile)))
		submitted := int64(i+1) * tile
		assert.LessOrEqual(t, submitted-consumed.Load(), int64(limit), "after tile %d", i)
	}
	require.NoError(t, p.Close())
	assert.Equal(t, int64(40*tile), consumed.Load())
}

// TestPipelineDefaultBoundFollowsJobs checks that the default bound grows
// with the tile size so that every worker can have a tile.
func TestPipelineDefaultBoundFollowsJobs(t *testing.T) {
	p := NewPipeline(context.Background(), Options{Workers: 2}, nil)
	assert.Equal(t, defaultMinInFlightBytes, p.maxInFlight)
	require.NoError(t, p.Submit(noneCodec{}, make([]byte, 3<<20)))
	assert.Equal(t, 2*2*3<<20, p.maxInFlight)
	require.NoError(t, p.Close())
}

// TestPipelineDefaultBound checks the default bound after jobs of each
// size: the larger of 4 MiB and 2 x Workers x the largest job so far,
// for jobs just past a quarter of 4 MiB and between a quarter and a half.
func TestPipelineDefaultBound(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		name    string
		workers int
		jobs    []int
		want    int
	}{
		{"small jobs", 2, []int{256 << 10, mib}, 4 * mib},
		{"a job of 1.5 MiB", 2, []int{3 * mib / 2}, 6 * mib},
		{"a job of 1 MiB and a byte", 2, []int{mib + 1}, 4*mib + 4},
		{"a smaller job after it", 2, []int{3 * mib / 2, mib}, 6 * mib},
		{"four workers", 4, []int{768 << 10}, 6 * mib},
		{"one worker more", 3, []int{mib}, 6 * mib},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPipeline(context.Background(), Options{Workers: tt.workers, BatchBytes: 1}, nil)
			for _, n := range tt.jobs {
				require.NoError(t, p.Submit(noneCodec{}, make([]byte, n)))
			}
			assert.Equal(t, tt.want, p.maxInFlight)
			require.NoError(t, p.Close())
		})
	}
}

// TestPipelineOversizedTile checks that a tile above MaxInFlightBytes still
// goes through.
func TestPipelineOversizedTile(t *testing.T) {
	var n int
	p := NewPipeline(context.Background(), Options{Workers: 2, MaxInFlightBytes: 10}, func(int64, []byte) error { n++; return nil })
	for range 3 {
		require.NoError(t, p.Submit(noneCodec{}, make([]byte, 100)))
	}
	require.NoError(t, p.Close())
	assert.Equal(t, 3, n)
}

// failingEncoder fails on its fail-th call and encodes as None otherwise.
type failingEncoder struct {
	calls atomic.Int64
	fail  int64
	err   error
}

func (f *failingEncoder) Encode(dst, src []byte) ([]byte, error) {
	if f.calls.Add(1) == f.fail {
		return dst, f.err
	}
	return append(dst, src...), nil
}

// submitUntilError submits up to n tiles and returns the first error.
func submitUntilError(p *Pipeline, enc Encoder, n int) error {
	for range n {
		if err := p.Submit(enc, p.Buffer(64)); err != nil {
			return err
		}
	}
	return nil
}

// TestPipelineStops checks each way a pipeline stops early: its goroutines
// exit without Close (in a synctest bubble, waiting for them would
// deadlock, and fail the test, if one were left blocked), the consumer
// sees a gapless prefix of the tiles, Submit and Close report the cause.
func TestPipelineStops(t *testing.T) {
	errEncoder := errors.New("encoder failed")
	errConsumer := errors.New("consumer failed")
	cases := []struct {
		name    string
		encoder *failingEncoder
		consume func(seq int64) error
		cancel  int64 // cancel the context when this tile is consumed
		want    error
	}{
		{"encoder error", &failingEncoder{fail: 50, err: errEncoder}, nil, -1, errEncoder},
		{"consumer error", &failingEncoder{}, func(seq int64) error {
			if seq == 30 {
				return errConsumer
			}
			return nil
		}, -1, errConsumer},
		{"cancel", &failingEncoder{}, nil, 20, context.Canceled},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					enc := &failingEncoder{fail: c.encoder.fail, err: c.encoder.err}
					var next int64
					p := NewPipeline(ctx, Options{Workers: workers, BatchBytes: 200}, func(seq int64, _ []byte) error {
						if seq != next {
							return fmt.Errorf("got tile %d, want %d", seq, next)
						}
						next++
						if seq == c.cancel {
							cancel()
						}
						if c.consume != nil {
							return c.consume(seq)
						}
						return nil
					})
					err := submitUntilError(p, enc, 100000)
					assert.ErrorIs(t, err, c.want)
					p.wg.Wait() // the goroutines exit before Close
					assert.ErrorIs(t, p.Submit(enc, make([]byte, 8)), c.want, "the error is sticky")
					assert.ErrorIs(t, p.Close(), c.want)
					assert.ErrorIs(t, p.Close(), c.want, "Close again")
				})
			})
		}
	}
}

// panickingEncoder panics on its call number at.
type panickingEncoder struct {
	calls atomic.Int64
	at    int64
}

func (e *panickingEncoder) Encode(dst, src []byte) ([]byte, error) {
	if e.calls.Add(1) == e.at {
		panic("encoder boom")
	}
	return append(dst, src...), nil
}

// TestPipelinePanics: a panic of the encoder or of the consumer reaches
// the producer, in Submit or Close, at every Workers (with several, it
// crashed the process from the pipeline's goroutine); the goroutines exit
// (the synctest bubble fails on one left blocked), the consumer saw a
// gapless prefix, and the calls after it return ErrPanicked.
func TestPipelinePanics(t *testing.T) {
	for _, where := range []string{"encoder", "consumer"} {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", where, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					enc := &panickingEncoder{at: -1}
					if where == "encoder" {
						enc.at = 40
					}
					var next int64
					p := NewPipeline(context.Background(), Options{Workers: workers, BatchBytes: 200}, func(seq int64, _ []byte) error {
						if seq != next {
							return fmt.Errorf("got tile %d, want %d", seq, next)
						}
						next++
						if where == "consumer" && seq == 30 {
							panic("consumer boom")
						}
						return nil
					})
					var raised any
					var err error
					func() {
						defer func() { raised = recover() }()
						err = submitUntilError(p, enc, 100000)
						err = errors.Join(err, p.Close())
					}()
					require.Equal(t, where+" boom", raised, "err %v", err)
					assert.ErrorIs(t, p.Submit(enc, make([]byte, 8)), ErrPanicked, "the error is sticky")
					assert.ErrorIs(t, p.Close(), ErrPanicked)
					assert.ErrorContains(t, p.Close(), where+" boom")
				})
			})
		}
	}
}

// TestPipelineConsumerReentry: a consumer that calls Close, or a Submit
// that must wait for room the consumer alone makes, gets ErrConcurrent
// and fails the pipeline, at every Workers (with several, the goroutine
// waited for itself for ever, and the synctest bubble fails on it); the
// producer's Close returns the error and stops the goroutines.
func TestPipelineConsumerReentry(t *testing.T) {
	for _, what := range []string{"Close", "Submit"} {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", what, workers), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var p *Pipeline
					var inner error
					p = NewPipeline(context.Background(), Options{Workers: workers, BatchBytes: 1, MaxInFlightBytes: 1}, func(seq int64, _ []byte) error {
						if seq == 0 {
							if what == "Close" {
								inner = p.Close()
							} else {
								inner = p.Submit(nil, make([]byte, 10))
							}
						}
						return nil
					})
					err := p.Submit(nil, make([]byte, 10))
					synctest.Wait() // tile 0 consumed
					err = errors.Join(err, p.Close())
					assert.ErrorIs(t, inner, ErrConcurrent)
					assert.ErrorIs(t, err, ErrConcurrent)
				})
			})
		}
	}
}

// TestPipelineCancelledBeforeStart: a pipeline made with a context
// cancelled already, whose callback runs at once in its own goroutine,
// races nothing in the constructor (go test -race); closed with nothing
// submitted, it returns nil or the cause, as the callback came first.
func TestPipelineCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		p := NewPipeline(ctx, Options{Workers: 2}, nil)
		if err := p.Close(); err != nil {
			assert.ErrorIs(t, err, context.Canceled)
		}
	}
}

// TestPipelineNoGoroutineOutlivesClose runs pipelines in a synctest
// bubble, which fails the test if a goroutine is left blocked after Close.
func TestPipelineNoGoroutineOutlivesClose(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tiles, encoders := pipelineTiles(30)
				runPipeline(t, Options{Workers: workers}, tiles, encoders)
			})
		})
	}
}

// TestPipelineSynchronous checks that one worker means no goroutine: the
// consumer runs inside Submit, and the bubble ends cleanly although the
// pipeline is never closed, which a goroutine blocked waiting for work
// would turn into a deadlock.
func TestPipelineSynchronous(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		consumed := 0
		p := NewPipeline(context.Background(), Options{Workers: 1}, func(int64, []byte) error {
			consumed++
			return nil
		})
		require.NoError(t, p.Submit(lzwCodec{}, p.Buffer(100)))
		assert.Equal(t, 1, consumed, "consumed synchronously")
	})
}

// TestPipelineEmptyTileIsAJob submits tiles of 0 bytes with BatchBytes 1,
// as the band reader does for sparse blocks, and waits for each before the
// next, without Close: each must reach the consumer on its own (an empty
// tile once waited in its batch for ever).
func TestPipelineEmptyTileIsAJob(t *testing.T) {
	for _, workers := range []int{2, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var consumed atomic.Int64
				p := NewPipeline(context.Background(), Options{Workers: workers, BatchBytes: 1}, func(int64, []byte) error {
					consumed.Add(1)
					return nil
				})
				for i, n := range []int{0, 5, 0, 0} {
					require.NoError(t, p.Submit(noneCodec{}, p.Buffer(n)))
					synctest.Wait()
					require.EqualValues(t, i+1, consumed.Load(), "tile %d (%d bytes) consumed before Close", i, n)
				}
				require.NoError(t, p.Close())
			})
		})
	}
}

func TestPipelineNilEncoderStores(t *testing.T) {
	got := runPipeline(t, Options{Workers: 2}, [][]byte{[]byte("raw")}, []Encoder{nil})
	assert.Equal(t, [][]byte{[]byte("raw")}, got)
}

func TestPipelineSubmitAfterClose(t *testing.T) {
	for _, workers := range []int{1, 2} {
		p := NewPipeline(context.Background(), Options{Workers: workers}, nil)
		require.NoError(t, p.Close())
		assert.ErrorIs(t, p.Submit(noneCodec{}, make([]byte, 1)), ErrClosed)
		assert.NoError(t, p.Close())
	}
}

// blockingEncoder stores a tile after its first call has told inside and
// waited for release.
type blockingEncoder struct{ inside, release chan struct{} }

func (e blockingEncoder) Encode(dst, src []byte) ([]byte, error) {
	select {
	case <-e.inside:
	default:
		close(e.inside)
		<-e.release
	}
	return append(dst, src...), nil
}

// TestPipelineConcurrentProducers: a Submit or Close while another
// goroutine's Submit is under way fails the pipeline with ErrConcurrent,
// in both modes (the race detector found the synchronous mode's buffer
// shared); the tile it was given is not consumed. One refused call is
// made per pipeline: the failure it causes wakes a Submit waiting for
// room, which then returns, so a second call might no longer be
// concurrent (a Close would then wait for the blocked encoder).
func TestPipelineConcurrentProducers(t *testing.T) {
	for _, workers := range []int{1, 2} {
		for _, call := range []string{"Submit", "Close"} {
			var consumed [][]byte
			// One tile of 3 bytes in flight at most: the second waits in Submit.
			p := NewPipeline(context.Background(), Options{Workers: workers, BatchBytes: 1, MaxInFlightBytes: 3}, func(_ int64, b []byte) error {
				consumed = append(consumed, bytes.Clone(b))
				return nil
			})
			enc := blockingEncoder{make(chan struct{}), make(chan struct{})}
			first := make(chan error, 1)
			go func() { first <- p.Submit(enc, []byte("one")) }()
			if workers == 1 {
				<-enc.inside // encoding, inside Submit
			} else {
				require.NoError(t, <-first) // queued; the worker encodes it
				<-enc.inside
				go func() { first <- p.Submit(enc, []byte("two")) }()
				for !p.producing.Load() { // waiting for room, inside Submit
					runtime.Gosched()
				}
			}
			if call == "Submit" {
				assert.ErrorIs(t, p.Submit(noneCodec{}, []byte("mine")), ErrConcurrent, "%d workers", workers)
			} else {
				assert.ErrorIs(t, p.Close(), ErrConcurrent, "%d workers", workers)
			}
			close(enc.release)
			<-first
			assert.ErrorIs(t, p.Close(), ErrConcurrent, "%d workers, %s: the failure stays", workers, call)
			assert.NotContains(t, consumed, []byte("mine"))
		}
	}
}

// TestPipelineReusesBuffers checks that in a steady state (here reached
// quickly through a small MaxInFlightBytes) tiles go through without
// allocating.
func TestPipelineReusesBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	tile := slideTiles(1, 64)[0]
	enc := &TileEncoder{Codec: mustCodec(tiff.CompressionDeflate, 0), Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: 64}
	for _, workers := range []int{1, 2} {
		opts := Options{Workers: workers, BatchBytes: 1, MaxInFlightBytes: 4 * len(tile)}
		p := NewPipeline(context.Background(), opts, nil)
		submit := func() {
			buf := p.Buffer(len(tile))
			copy(buf, tile)
			if err := p.Submit(enc, buf); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			submit()
		}
		allocs := testing.AllocsPerRun(200, submit)
		assert.Less(t, allocs, 0.5, "workers=%d", workers)
		require.NoError(t, p.Close())
	}
}

func TestBufferPool(t *testing.T) {
	b := bufferPool{limit: 1000}
	small := b.get(100)
	assert.Len(t, small, 100)
	b.put(small)
	again := b.get(90)
	assert.Len(t, again, 90)
	assert.Same(t, &small[0], &again[0], "reused")
	b.put(make([]byte, 2000)) // over the limit: dropped
	assert.Equal(t, 0, b.bytes)
	assert.Len(t, b.get(0), 0)
}

// TestBufferPoolClasses: a buffer is reused for a length of its own
// capacity class, when it is large enough, or of the class below, which it
// always is; not for smaller lengths, nor larger than its capacity.
func TestBufferPoolClasses(t *testing.T) {
	for _, tt := range []struct {
		capacity, n int
		reused      bool
	}{
		{1000, 1000, true},
		{1000, 600, true},  // the same class, 512..1023
		{1000, 500, true},  // the class below, 256..511
		{1000, 256, true},  // its smallest length
		{1000, 255, false}, // two classes below
		{1000, 1001, false},
		{1024, 1024, true},
		{1024, 512, true},
		{1024, 511, false},
	} {
		b := bufferPool{limit: 1 << 20}
		buf := make([]byte, tt.capacity)
		b.put(buf)
		got := b.get(tt.n)
		assert.Len(t, got, tt.n)
		assert.Equal(t, tt.reused, len(got) > 0 && &got[0] == &buf[0], "a buffer of %d for %d bytes", tt.capacity, tt.n)
		if tt.reused {
			assert.Equal(t, 0, b.bytes, "taken out of the pool")
		}
	}
}

// gatedEncoder waits for its gate to open, then fails with err, or stores
// the tile unchanged if err is nil.
type gatedEncoder struct {
	gate chan struct{}
	err  error
}

func (g *gatedEncoder) Encode(dst, src []byte) ([]byte, error) {
	<-g.gate
	if g.err != nil {
		return dst, g.err
	}
	return append(dst, src...), nil
}

// countingEncoder stores tiles unchanged and counts them.
type countingEncoder struct{ calls atomic.Int64 }

func (c *countingEncoder) Encode(dst, src []byte) ([]byte, error) {
	c.calls.Add(1)
	return append(dst, src...), nil
}

// TestPipelineStopsEncoding: once an encoder fails, the workers encode no
// more of the tiles queued: the one busy finishes its tile and exits.
func TestPipelineStopsEncoding(t *testing.T) {
	for _, queued := range []int{1, 8} {
		boom := errors.New("boom")
		failing, held := &gatedEncoder{gate: make(chan struct{}), err: boom}, &gatedEncoder{gate: make(chan struct{})}
		rest := new(countingEncoder)
		p := NewPipeline(context.Background(), Options{Workers: 2, BatchBytes: 1, MaxInFlightBytes: 1 << 20}, nil)
		require.NoError(t, p.Submit(failing, p.Buffer(10)))
		require.NoError(t, p.Submit(held, p.Buffer(10)))
		for range queued {
			require.NoError(t, p.Submit(rest, p.Buffer(10)))
		}
		close(failing.gate) // both workers are busy until now
		require.Eventually(t, func() bool { return p.firstErr() != nil }, 10*time.Second, time.Millisecond)
		close(held.gate)
		require.ErrorIs(t, p.Close(), boom)
		assert.Zero(t, rest.calls.Load(), "%d tiles queued behind the failure", queued)
	}
}

// TestPipelineContextDoneUnannounced: a context done fails the pipeline
// whether or not its callback has run, at every Workers: the next Submit
// fails, and so does Close when it was done after the last tile.
func TestPipelineContextDoneUnannounced(t *testing.T) {
	for _, workers := range []int{1, 2} {
		ctx := ctxtest.New()
		p := NewPipeline(ctx, Options{Workers: workers}, nil)
		require.NoError(t, p.Submit(nil, p.Buffer(16)))
		ctx.Cancel()
		assert.ErrorIs(t, p.Submit(nil, p.Buffer(16)), context.Canceled, "Workers %d: Submit", workers)
		assert.ErrorIs(t, p.Close(), context.Canceled, "Workers %d: Close", workers)

		ctx = ctxtest.New()
		p = NewPipeline(ctx, Options{Workers: workers}, nil)
		require.NoError(t, p.Submit(nil, p.Buffer(16)))
		ctx.Cancel()
		assert.ErrorIs(t, p.Close(), context.Canceled, "Workers %d: done after the last tile", workers)
	}
}
