// Command scalesnap scales a real PyTorch memory snapshot up to N trace
// entries, streaming, as bench/scale_snapshot.py does in memory:
//
//	scalesnap -entries N [-gzip] IN OUT
//
// IN is a snapshot pickle, gzip or not; OUT is a file or - for stdout,
// gzipped with -gzip. See benchgen.ScaleSnapshot for what is written.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gpuleak/gpuleak/bench/benchgen"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scalesnap:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scalesnap", flag.ContinueOnError)
	entries := fs.Int64("entries", 0, "trace entries in each device trace of the output (required, > 0)")
	gz := fs.Bool("gzip", false, "gzip the output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || *entries <= 0 {
		return fmt.Errorf("usage: scalesnap -entries N [-gzip] IN OUT|-")
	}
	in, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.Close()
	var out io.Writer = stdout
	var f *os.File
	if fs.Arg(1) != "-" {
		if f, err = os.Create(fs.Arg(1)); err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	var zw *gzip.Writer
	w := io.Writer(bw)
	if *gz {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	if _, err := benchgen.ScaleSnapshot(in, w, *entries); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}
