//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/tiff"
)

// generateEnv, set to a seed, makes the program write a raw RGB slide
// instead: its arguments are the width, the height and the file.
const generateEnv = "CONVERTCOMPARE_GENERATE"

// generate writes the synthetic RGB slide of the seed, width x height,
// to a raw file of interleaved 8-bit samples, in bands of 256 rows.
func generate(seed string, args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("generate: want width, height and file, got %q", args)
	}
	s, err1 := strconv.ParseUint(seed, 10, 64)
	w, err2 := strconv.Atoi(args[0])
	h, err3 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || err3 != nil || w < 1 || h < 1 {
		return fmt.Errorf("generate: bad seed or size %q %q", seed, args)
	}
	f, err := os.Create(args[2])
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	p := synth.Pattern{Seed: s}
	band := make([]byte, 256*w*3)
	for y := 0; y < h && err == nil; y += 256 {
		rows := min(256, h-y)
		p.RGB8(band, 0, y, w, rows)
		_, err = bw.Write(band[:rows*w*3])
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// slide writes the synthetic slide of the seed, width x height, to a raw
// file in dir, by this program re-run as a generator, and returns it.
func slide(ctx context.Context, dir string, seed uint64, width, height int) (string, error) {
	raw := filepath.Join(dir, fmt.Sprintf("slide-%d-%dx%d.rgb", seed, width, height))
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, self, strconv.Itoa(width), strconv.Itoa(height), raw)
	cli.KillGroupOnCancel(cmd)
	cmd.Env = append(os.Environ(), generateEnv+"="+strconv.FormatUint(seed, 10))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(raw)
		return "", fmt.Errorf("generating %s: %v: %s", raw, err, out)
	}
	return raw, nil
}

// sh runs a command, failing with what it printed; cancelling ctx kills
// it.
func sh(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cli.KillGroupOnCancel(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// rawSave turns a raw slide into a TIFF (or a libvips image, .v) at path
// with libvips's save options, and removes the raw file. libvips picks
// its saver by the extension: another one, .svs, is saved as .tif first.
func rawSave(ctx context.Context, raw, path string, width, height int, options string) error {
	defer os.Remove(raw)
	saved := path
	if ext := filepath.Ext(path); ext != ".tif" && ext != ".v" {
		saved = path + ".tif"
	}
	if err := sh(ctx, "vips", "rawload", raw, saved+options, strconv.Itoa(width), strconv.Itoa(height), "3"); err != nil {
		os.Remove(saved)
		return err
	}
	if saved != path {
		return os.Rename(saved, path)
	}
	return nil
}

// makeStrips writes the RGB slide, 8192 x 8192 by default, as libvips
// writes a striped Deflate TIFF.
func makeStrips(ctx context.Context, dir, path string, sz sizes) error {
	raw, err := slide(ctx, dir, 1, sz.strips, sz.strips)
	if err != nil {
		return err
	}
	return rawSave(ctx, raw, path, sz.strips, sz.strips, "[compression=deflate]")
}

// makeSVS writes an SVS-like slide, 24576 x 16384 by default: libvips's
// JPEG pyramid at quality 70 in 240 x 240 tiles, then a label (LZW strips)
// and a macro (JPEG strips) appended by tiffcp, with Aperio descriptions
// set by tiffset.
func makeSVS(ctx context.Context, dir, path string, sz sizes) error {
	w, h := sz.svsWidth, sz.svsHeight
	raw, err := slide(ctx, dir, 1, w, h)
	if err != nil {
		return err
	}
	if err := rawSave(ctx, raw, path, w, h, "[compression=jpeg,Q=70,tile,tile-width=240,tile-height=240,pyramid]"); err != nil {
		return err
	}
	levels, err := pages(path)
	if err != nil {
		return err
	}
	for _, a := range []struct {
		seed           uint64
		width, height  int
		name, compress string
	}{{2, 463, 387, "label", "lzw"}, {3, 1280, 431, "macro", "jpeg:70"}} {
		raw, err := slide(ctx, dir, a.seed, a.width, a.height)
		if err != nil {
			return err
		}
		plain := filepath.Join(dir, a.name+".tif")
		if err := rawSave(ctx, raw, plain, a.width, a.height, ""); err != nil {
			return err
		}
		if err := sh(ctx, "tiffcp", "-a", "-s", "-r", "16", "-c", a.compress, plain, path); err != nil {
			return err
		}
		os.Remove(plain)
	}
	descriptions := map[int]string{
		0: fmt.Sprintf("Aperio Image Library v12.0.5\n%dx%d [0,100 %dx%d] (240x240) JPEG/RGB Q=70|AppMag = 20|StripeWidth = 2040|"+
			"ScanScope ID = SS1234|Filename = 1004|Date = 12/29/09|Time = 09:59:15|Time Zone = GMT-05:00|MPP = 0.4990", w, h, w, h),
		levels:     "Aperio Image Library v12.0.5\nlabel 463x387",
		levels + 1: "Aperio Image Library v12.0.5\nmacro 1280x431",
	}
	for d, text := range descriptions {
		if err := sh(ctx, "tiffset", "-d", strconv.Itoa(d), "-s", "270", text, path); err != nil {
			return err
		}
	}
	return nil
}

// makeHuge writes a 100,000 x 100,000 (by default) RGB JPEG BigTIFF in
// libvips's default 128 x 128 tiles: a 10,000 x 10,000 slide replicated
// 10 x 10.
func makeHuge(ctx context.Context, dir, path string, sz sizes) error {
	base10 := sz.huge / 10
	raw, err := slide(ctx, dir, 1, base10, base10)
	if err != nil {
		return err
	}
	base := filepath.Join(dir, "huge-base.v")
	defer os.Remove(base)
	if err := rawSave(ctx, raw, base, base10, base10, ""); err != nil {
		return err
	}
	return sh(ctx, "vips", "replicate", base, path+"[compression=jpeg,tile,bigtiff]", "10", "10")
}

// pages counts the pages of the main chain of a TIFF file.
func pages(path string) (int, error) {
	f, err := tiff.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return len(f.Pages), nil
}
