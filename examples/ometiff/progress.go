package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ometiff-go/ometiff/pyramid"
)

// progress draws a bar of the tiles written, on a terminal only.
type progress struct {
	out     io.Writer
	visible bool                     // out is a terminal
	bar     *progressbar.ProgressBar // nil until the first tile
}

// newProgress returns a progress bar drawn on out when out is a terminal.
func newProgress(out io.Writer) *progress {
	f, ok := out.(*os.File)
	return &progress{out: out, visible: ok && term.IsTerminal(int(f.Fd()))}
}

// update is the writer's Options.Progress: it moves the bar to the tiles
// written out of those known.
func (p *progress) update(pr pyramid.Progress) {
	if p.bar == nil {
		p.bar = progressbar.NewOptions64(pr.TotalTiles,
			progressbar.OptionSetWriter(p.out),
			progressbar.OptionSetDescription("writing tiles"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	if pr.TotalTiles != p.bar.GetMax64() {
		p.bar.ChangeMax64(pr.TotalTiles)
	}
	_ = p.bar.Set64(pr.Tiles)
}

// done clears the bar, so the next line on the terminal starts clean.
func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}
