package compress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Encoder encodes one tile: it appends the encoded src to dst and returns
// the extended slice. *TileEncoder and every Codec implement it.
type Encoder interface {
	Encode(dst, src []byte) ([]byte, error)
}

// ErrClosed reports a Submit after Close.
var ErrClosed = errors.New("compress: pipeline closed")

// ErrConcurrent reports a Submit or Close called while another goroutine's
// is under way: a Pipeline has one producer. It fails the pipeline, whose
// stream of tiles is then incomplete; a Close refused so closes nothing,
// and the producer's own Close still stops the goroutines. So does a Close
// from the consumer, or a Submit of the consumer's that would wait for it,
// which would wait for ever (told by the goroutine: a consumer that has
// another goroutine call them, and waits for it, still waits for ever).
var ErrConcurrent = errors.New("compress: pipeline used by two producers at once")

// ErrPanicked reports a pipeline whose encoder or consumer panicked: the
// panic reaches the producer (in Submit or Close, whichever it calls
// next, with several workers), and later calls return this error.
var ErrPanicked = errors.New("compress: an encoder or the consumer panicked")

// panicError is the error of a pipeline whose encoder or consumer
// panicked with value.
type panicError struct{ value any }

func (e *panicError) Error() string        { return fmt.Sprintf("%v: %v", ErrPanicked, e.value) }
func (e *panicError) Is(target error) bool { return target == ErrPanicked }

// Defaults of Options.
const (
	defaultBatchBytes       = 256 << 10
	defaultMinInFlightBytes = 4 << 20
)

// Options configure a Pipeline. The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines compressing tiles. 0 (or less)
	// means GOMAXPROCS; 1 compresses synchronously inside Submit, with no
	// goroutine at all.
	Workers int
	// MaxInFlightBytes bounds the raw bytes of the tiles submitted but not
	// yet handed to the consumer: Submit blocks while the bound would be
	// passed. A tile larger than the bound is accepted when nothing else is
	// in flight. 0 (or less) means the larger of 4 MiB and 2 × Workers ×
	// the largest job so far, enough to keep every worker busy whatever the
	// tile size.
	MaxInFlightBytes int
	// BatchBytes is how many raw bytes of consecutive tiles make one job
	// for a worker: small tiles travel in batches so that the
	// synchronization per job is amortized. 0 (or less) means 256 KiB. A
	// caller whose jobs grow a lot in the encoding (a decoder, whose input
	// is compressed) sets 1, so that every tile is its own job, even an
	// empty one.
	BatchBytes int
}

// Pipeline compresses a stream of tiles on several goroutines and hands
// the encoded tiles to one consumer in submission order.
//
// The producer, a single goroutine, calls Buffer for a raw tile buffer,
// fills it, passes it to Submit with the Encoder to use, and calls Close at
// the end. A Submit or Close while another goroutine's is under way fails
// the pipeline with ErrConcurrent. The consumer function is called once per
// tile, in order, never concurrently; the encoded slice it receives is
// reused after it returns, so it must not retain it. Raw tiles are
// recycled as soon as they are encoded, encoded tiles after the consumer
// returns.
//
// The first error of an encoder or of the consumer, or the cancellation of
// the context, stops the pipeline: its goroutines exit at once, and Submit
// and Close return that error. A panic of either stops it too, and is
// raised again in the producer's next Submit or Close (in the synchronous
// mode, it goes through Submit), whatever Workers is; the calls after it
// return ErrPanicked.
type Pipeline struct {
	consume     func(seq int64, encoded []byte) error
	ctx         context.Context
	stopCtx     func() bool
	synchronous bool
	workers     int
	batchBytes  int
	maxInFlight int
	autoLimit   bool // maxInFlight follows the largest job

	// Owned by the producer, which producing guards.
	producing atomic.Bool
	batch     *job   // tiles not yet dispatched
	seq       int64  // sequence number of the next tile submitted
	syncOut   []byte // encoding buffer of the synchronous mode
	closed    bool
	raised    bool // a panic of an encoder or the consumer was raised again

	consumer atomic.Int64 // the goroutine id of the consumer's goroutine, with several workers

	mu       sync.Mutex
	work     sync.Cond // a job was queued, or the pipeline stops
	ready    sync.Cond // the oldest pending job was encoded, or the pipeline stops
	space    sync.Cond // bytes in flight dropped, or the pipeline stops
	queue    fifo      // jobs waiting for a worker
	pending  fifo      // jobs not yet consumed, in submission order
	inFlight int       // raw bytes of the pending jobs
	closing  bool      // no more jobs will be queued
	err      error     // the first error
	raw      bufferPool
	jobs     []*job // recycled jobs, with their encoded-tile buffers
	wg       sync.WaitGroup
}

// NewPipeline starts a pipeline that passes each encoded tile, with its
// sequence number (0 for the first tile submitted), to consume. A nil
// consume discards the encoded tiles; a nil ctx means context.Background.
// Once ctx is done, the pipeline fails with context.Cause(ctx): Submit
// and Close return it, even for tiles all consumed before Close.
func NewPipeline(ctx context.Context, opts Options, consume func(seq int64, encoded []byte) error) *Pipeline {
	if ctx == nil {
		ctx = context.Background()
	}
	if consume == nil {
		consume = func(int64, []byte) error { return nil }
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := &Pipeline{
		consume:     consume,
		ctx:         ctx,
		synchronous: workers == 1,
		workers:     workers,
		batchBytes:  opts.BatchBytes,
		maxInFlight: opts.MaxInFlightBytes,
		autoLimit:   opts.MaxInFlightBytes <= 0,
	}
	if p.batchBytes <= 0 {
		p.batchBytes = defaultBatchBytes
	}
	if p.autoLimit {
		p.maxInFlight = defaultMinInFlightBytes
	}
	p.raw.limit = p.maxInFlight
	p.work.L, p.ready.L, p.space.L = &p.mu, &p.mu, &p.mu
	if p.synchronous {
		p.stopCtx = func() bool { return false }
		return p
	}
	// Under p.mu: a context cancelled already runs the func at once, in
	// its own goroutine, and failLocked calls p.stopCtx.
	p.mu.Lock()
	p.stopCtx = context.AfterFunc(ctx, func() { p.fail(context.Cause(ctx)) })
	p.mu.Unlock()
	p.wg.Add(workers + 1)
	for range workers {
		go p.runWorker()
	}
	go p.runConsumer()
	return p
}

// Buffer returns a raw tile buffer of length n for the producer to fill and
// Submit. Its contents are undefined.
func (p *Pipeline) Buffer(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw.get(n)
}

// Submit queues tile, encoded by enc (nil: stored unchanged),
// behind the tiles submitted before it. It takes ownership of tile, which
// should come from Buffer. It blocks while too many bytes are in flight, and
// returns the pipeline's first error, if any, or ErrClosed after Close.
func (p *Pipeline) Submit(enc Encoder, tile []byte) error {
	if !p.producing.CompareAndSwap(false, true) {
		p.fail(ErrConcurrent)
		return ErrConcurrent
	}
	defer p.producing.Store(false)
	if p.closed {
		return ErrClosed
	}
	if enc == nil {
		enc = noneCodec{}
	}
	// The context is looked at here too: the callback that fails the
	// pipeline when it is done runs on a goroutine of its own, maybe after
	// the tiles still to come are all encoded.
	if p.ctx.Err() != nil {
		p.fail(context.Cause(p.ctx))
	}
	if err := p.firstErr(); err != nil {
		p.recycle(tile)
		p.raise(err)
		return err
	}
	if p.synchronous {
		return p.encodeNow(enc, tile)
	}
	if p.batch == nil {
		p.batch = p.newJob()
		p.batch.seq = p.seq
	}
	p.batch.add(enc, tile)
	p.seq++
	// With BatchBytes 1 an empty tile (a decoder's sparse block) is a job
	// too: a producer waiting for it before its next Submit would
	// otherwise wait for ever.
	if p.batch.bytes < p.batchBytes && p.batchBytes > 1 {
		return nil
	}
	err := p.dispatch()
	p.raise(err)
	return err
}

// raise panics again with the value an encoder or the consumer panicked
// with, on the producer's goroutine, once.
func (p *Pipeline) raise(err error) {
	if err == nil || p.raised {
		return // nothing escapes to the heap on the way of every tile
	}
	var pe *panicError
	if errors.As(err, &pe) {
		p.raised = true
		panic(pe.value)
	}
}

// Close submits the last batch, waits until every tile is consumed or the
// pipeline fails, stops all goroutines and returns the first error. Later
// calls return the same error.
func (p *Pipeline) Close() error {
	if p.onConsumer() {
		p.fail(ErrConcurrent)
		return ErrConcurrent
	}
	if !p.producing.CompareAndSwap(false, true) {
		p.fail(ErrConcurrent)
		return ErrConcurrent
	}
	defer p.producing.Store(false)
	if !p.closed {
		p.closed = true
		if p.batch != nil {
			_ = p.dispatch() // a failure is p.err, returned below
		}
		p.mu.Lock()
		p.closing = true
		p.work.Broadcast()
		p.ready.Broadcast()
		p.mu.Unlock()
		p.wg.Wait()
		if p.ctx.Err() != nil { // done before Close, whether its callback ran or not
			p.fail(context.Cause(p.ctx))
		}
		p.stopCtx()
	}
	err := p.firstErr()
	p.raise(err)
	return err
}

// firstErr returns the pipeline's first error, or nil.
func (p *Pipeline) firstErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// encodeNow encodes and consumes one tile in the synchronous mode. A
// panic of the encoder or the consumer goes on through Submit, the
// pipeline failed and the tile counted.
func (p *Pipeline) encodeNow(enc Encoder, tile []byte) (err error) {
	defer func() {
		if v := recover(); v != nil { // panic(nil) recovers a *runtime.PanicNilError
			p.raised = true
			p.seq++
			p.fail(&panicError{v})
			panic(v)
		}
	}()
	err = p.ctx.Err()
	if err == nil {
		p.syncOut, err = enc.Encode(p.syncOut[:0], tile)
	}
	p.recycle(tile)
	if err == nil {
		err = p.consume(p.seq, p.syncOut)
	}
	p.seq++
	if err != nil {
		p.fail(err)
	}
	return err
}

// recovered turns a panic of the encoder or the consumer, on a goroutine
// of the pipeline's, into the pipeline's error, which the producer's next
// call raises again. Deferred.
func (p *Pipeline) recovered() {
	if v := recover(); v != nil {
		p.fail(&panicError{v})
	}
}

// dispatch queues the current batch once there is room for it.
func (p *Pipeline) dispatch() error {
	j := p.batch
	p.batch = nil
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.autoLimit && 2*p.workers*j.bytes > p.maxInFlight {
		p.maxInFlight = 2 * p.workers * j.bytes
		p.raw.limit = p.maxInFlight
	}
	for p.err == nil && p.inFlight > 0 && p.inFlight+j.bytes > p.maxInFlight {
		if p.onConsumer() { // which alone makes room
			p.failLocked(ErrConcurrent)
			break
		}
		p.space.Wait()
	}
	if p.err != nil {
		return p.err
	}
	p.inFlight += j.bytes
	p.queue.push(j)
	p.pending.push(j)
	p.work.Signal()
	return nil
}

// runWorker encodes queued jobs until the pipeline closes or fails.
func (p *Pipeline) runWorker() {
	defer p.wg.Done()
	defer p.recovered()
	for {
		j := p.takeJob()
		if j == nil {
			return
		}
		p.encoded(j, j.encode())
	}
}

// takeJob waits for a queued job; nil means the worker should exit.
func (p *Pipeline) takeJob() *job {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && p.queue.len() == 0 && !p.closing {
		p.work.Wait()
	}
	if p.err != nil || p.queue.len() == 0 {
		return nil
	}
	return p.queue.pop()
}

// encoded recycles the raw tiles of j and marks it ready for the consumer.
func (p *Pipeline) encoded(j *job, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range j.tiles {
		p.raw.put(j.tiles[i].raw)
		j.tiles[i].raw = nil
	}
	if err != nil {
		p.failLocked(err)
		return
	}
	j.ready = true
	if p.pending.len() > 0 && p.pending.peek() == j {
		p.ready.Signal()
	}
}

// runConsumer hands encoded jobs to the consumer in order until the
// pipeline has consumed everything after Close, or fails.
func (p *Pipeline) runConsumer() {
	defer p.wg.Done()
	defer p.recovered()
	p.consumer.Store(goid())
	for {
		j := p.nextReady()
		if j == nil {
			return
		}
		p.consumed(j, j.deliver(p.consume))
	}
}

// nextReady waits for the oldest pending job to be encoded; nil means the
// consumer should exit.
func (p *Pipeline) nextReady() *job {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.err == nil && !(p.pending.len() > 0 && p.pending.peek().ready) && !(p.closing && p.pending.len() == 0) {
		p.ready.Wait()
	}
	if p.err != nil || p.pending.len() == 0 {
		return nil
	}
	return p.pending.pop()
}

// consumed releases the bytes of a consumed job and recycles it.
func (p *Pipeline) consumed(j *job, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight -= j.bytes
	p.space.Signal()
	j.reset()
	p.jobs = append(p.jobs, j)
	if err != nil {
		p.failLocked(err)
	}
}

// newJob returns an empty job, recycled if possible.
func (p *Pipeline) newJob() *job {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.jobs); n > 0 {
		j := p.jobs[n-1]
		p.jobs[n-1] = nil
		p.jobs = p.jobs[:n-1]
		return j
	}
	return new(job)
}

// recycle returns a raw tile buffer to the pool.
func (p *Pipeline) recycle(tile []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.raw.put(tile)
}

// fail records err as the pipeline's error if it is the first one.
func (p *Pipeline) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failLocked(err)
}

// failLocked records the first error and wakes every goroutine so that it
// exits. The caller holds p.mu.
func (p *Pipeline) failLocked(err error) {
	if p.err != nil {
		return
	}
	p.err = err
	p.work.Broadcast()
	p.ready.Broadcast()
	p.space.Broadcast()
	p.stopCtx()
}

// job is a batch of consecutive tiles, encoded by one worker.
type job struct {
	seq   int64 // sequence number of tiles[0]
	tiles []tileJob
	bytes int  // raw bytes of the tiles
	ready bool // encoded
}

// tileJob is one tile of a job. Its out buffer stays with the job when the
// job is recycled.
type tileJob struct {
	enc Encoder
	raw []byte
	out []byte
}

// add appends a tile to the job.
func (j *job) add(enc Encoder, raw []byte) {
	if len(j.tiles) < cap(j.tiles) {
		j.tiles = j.tiles[:len(j.tiles)+1]
	} else {
		j.tiles = append(j.tiles, tileJob{})
	}
	t := &j.tiles[len(j.tiles)-1]
	t.enc, t.raw = enc, raw
	j.bytes += len(raw)
}

// encode encodes every tile of the job into its out buffer.
func (j *job) encode() error {
	for i := range j.tiles {
		t := &j.tiles[i]
		out, err := t.enc.Encode(t.out[:0], t.raw)
		if err != nil {
			return err
		}
		t.out = out
	}
	return nil
}

// deliver passes the encoded tiles to consume in order.
func (j *job) deliver(consume func(int64, []byte) error) error {
	for i := range j.tiles {
		if err := consume(j.seq+int64(i), j.tiles[i].out); err != nil {
			return err
		}
	}
	return nil
}

// reset empties the job for reuse, dropping its references to encoders.
func (j *job) reset() {
	for i := range j.tiles {
		j.tiles[i].enc = nil
	}
	j.tiles = j.tiles[:0]
	j.bytes = 0
	j.ready = false
}

// fifo is a queue of jobs.
type fifo struct {
	jobs []*job
	head int
}

func (f *fifo) len() int { return len(f.jobs) - f.head }

func (f *fifo) peek() *job { return f.jobs[f.head] }

func (f *fifo) push(j *job) {
	if f.head > 0 && f.head >= len(f.jobs)/2 {
		n := copy(f.jobs, f.jobs[f.head:])
		clear(f.jobs[n:])
		f.jobs = f.jobs[:n]
		f.head = 0
	}
	f.jobs = append(f.jobs, j)
}

func (f *fifo) pop() *job {
	j := f.jobs[f.head]
	f.jobs[f.head] = nil
	f.head++
	return j
}

// bufferPool keeps raw tile buffers by capacity class, up to limit bytes.
type bufferPool struct {
	classes [bits.UintSize + 1][][]byte // by bits.Len of the capacity
	bytes   int
	limit   int
}

// get returns a buffer of length n, pooled if one is large enough.
func (b *bufferPool) get(n int) []byte {
	class := bits.Len(uint(n))
	for _, c := range [2]int{class, class + 1} {
		if c >= len(b.classes) {
			break
		}
		list := b.classes[c]
		if k := len(list) - 1; k >= 0 && cap(list[k]) >= n {
			buf := list[k]
			list[k] = nil
			b.classes[c] = list[:k]
			b.bytes -= cap(buf)
			return buf[:n]
		}
	}
	return make([]byte, n)
}

// put keeps buf for reuse unless the pool is full.
func (b *bufferPool) put(buf []byte) {
	if cap(buf) == 0 || b.bytes+cap(buf) > b.limit {
		return
	}
	c := bits.Len(uint(cap(buf)))
	b.classes[c] = append(b.classes[c], buf)
	b.bytes += cap(buf)
}

// onConsumer reports whether the caller runs on the consumer's goroutine,
// which a Close, or a Submit waiting for room, would wait for ever.
func (p *Pipeline) onConsumer() bool {
	id := p.consumer.Load()
	return id != 0 && goid() == id
}

// goid returns the id of the calling goroutine, from the first line of
// its stack trace ("goroutine 7 [running]:"): Go gives no other way to
// tell one goroutine from another, and a misused pipeline must fail, not
// wait for ever. It is called at Close, and when Submit would wait.
func goid() int64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s, _ = bytes.CutPrefix(s, []byte("goroutine "))
	var id int64
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}
