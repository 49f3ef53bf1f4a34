package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
)

// runMerge is tlcheck merge OUT SHARD_DIR…: certificates.Suite.Merge.
// A shard whose file does not match its claimed SHA-256 exits 1 (a
// tampered claim); every other problem — a missing, duplicate or
// out-of-range shard, shards of different runs, a non-empty OUT — exits 2,
// naming the shard directory and the field. Nothing is written to OUT on
// any error.
func runMerge(args []string, stdout, _ io.Writer) error {
	fs := newFlags("merge")
	asJSON := fs.Bool("json", false, "print a tlcheck.certify.v1 JSON document listing the merged files")
	if err := fs.parse(args, math.MaxInt); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return cli.Usagef("merge: usage: tlcheck merge [--json] OUT SHARD_DIR…")
	}
	out := fs.Arg(0)
	_, statErr := os.Lstat(out)
	fresh := errors.Is(statErr, os.ErrNotExist)
	m, err := certificates.FullSuite().Merge(out, fs.Args()[1:])
	if err != nil {
		var me *certificates.MergeError
		if errors.As(err, &me) && me.Tampered {
			return cli.Failf("merge: %v", err)
		}
		return cli.Usagef("merge: %v", err)
	}
	if *asJSON {
		err = writeCertifyJSON(stdout, out, m, nil)
	} else {
		_, err = fmt.Fprintf(stdout, "merged %s into %s: %s and %s (seed %d, %s each)\n", cli.Count(len(fs.Args())-1, "shard", "shards"), out,
			cli.Count(len(m.Files), "certificate file", "certificate files"), certificates.ManifestName, m.Seed, cli.Count(m.Cases, "case", "cases"))
	}
	if err != nil || cli.WriteErr(stdout) != nil {
		// The report is lost (exit 2): leave OUT as it was before the
		// run — absent, or the empty directory it was.
		undoMerge(out, fresh)
	}
	return err
}

// undoMerge removes what a merge wrote to out: out itself when the merge
// created it, else its entries (it was empty before).
func undoMerge(out string, fresh bool) {
	if fresh {
		os.RemoveAll(out)
		return
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(out, e.Name()))
	}
}
