package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

func init() { registerBackend(jsonlBackend{}) }

// jsonlBackend is the JSONL backend on its own copy of the dataset's pi
// file, so its appends and moves never touch the file pi and the floors
// read.
type jsonlBackend struct{}

func (jsonlBackend) name() string { return backendJSONL }

func (jsonlBackend) load(ctx context.Context, dir string, ds *dataset) (stored, error) {
	path := filepath.Join(datasetDir(dir, backendJSONL, ds), filepath.Base(ds.File))
	if err := copyFile(ds.File, path); err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	return jsonlStored{path}, nil
}

func (jsonlBackend) fresh(ctx context.Context, dir string, ds *dataset) (sessiontree.Storage, func() error, error) {
	path := filepath.Join(dir, ds.Meta.ID+".jsonl")
	os.Remove(path)
	st, err := jsonl.Create(ctx, path, ds.Meta, jsonl.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st, func() error {
		err := st.Close()
		os.Remove(path)
		return err
	}, nil
}

type jsonlStored struct{ path string }

// open opens the file for writing, as an agent resuming the session does
// (which takes the file's lock).
func (s jsonlStored) open(ctx context.Context, o openOpts) (sessiontree.Storage, error) {
	if o.cold {
		return nil, errUnsupported
	}
	return jsonl.Open(ctx, s.path, jsonl.Options{Sync: o.sync})
}

func (s jsonlStored) close() error { return nil }

// copyFile copies src to dst, making dst's directory.
func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
