// Package ctxtest has a context for tests of code that must notice a
// context done without waiting for its Done channel.
package ctxtest

import (
	"context"
	"sync/atomic"
)

// Unannounced is a context whose Err turns to context.Canceled when Cancel
// is called, while its Done channel never closes: it stands for a context
// done whose callbacks (context.AfterFunc) have not run yet, which the
// scheduler may delay for as long as it likes. It is made by New.
type Unannounced struct {
	context.Context
	done atomic.Bool
}

// New returns a context not done.
func New() *Unannounced { return &Unannounced{Context: context.Background()} }

// Cancel makes Err return context.Canceled from now on.
func (c *Unannounced) Cancel() { c.done.Store(true) }

// Done returns a channel that is never closed.
func (c *Unannounced) Done() <-chan struct{} { return nil }

// Err returns context.Canceled once Cancel was called, else nil.
func (c *Unannounced) Err() error {
	if c.done.Load() {
		return context.Canceled
	}
	return nil
}
