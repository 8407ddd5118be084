//go:build ignore

// Zipdir makes and unpacks the function zips for scripts/package.sh and
// scripts/emulate-build.sh, so that neither needs zip or unzip installed.
// It keeps Unix mode bits (bin/ffmpeg must stay executable: /tmp in the
// cloud is noexec, so the binary runs from the unpacked zip) and writes
// reproducible archives: entries sorted, every time stamp fixed, so the
// same sources give the same bytes and the same SHA-256.
//
//	go run scripts/zipdir/main.go create OUT.zip DIR   # DIR's contents at the zip root
//	go run scripts/zipdir/main.go extract IN.zip DIR   # unpack, modes kept
//	go run scripts/zipdir/main.go list IN.zip          # mode, size, name; then the unpacked total
package main

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// stamp is the time every entry carries: fixed, so the zip is reproducible.
var stamp = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zipdir:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "create":
		return create(args[1], args[2])
	case len(args) == 3 && args[0] == "extract":
		return extract(args[1], args[2])
	case len(args) == 2 && args[0] == "list":
		return list(args[1])
	}
	return errors.New("usage: zipdir create OUT.zip DIR | extract IN.zip DIR | list IN.zip")
}

func create(out, dir string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
			return nil
		}
		if !d.IsDir() {
			return fmt.Errorf("%s: only regular files and directories go into a function zip", p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, name := range names {
		if err := add(zw, filepath.Join(dir, filepath.FromSlash(name)), name); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func add(zw *zip.Writer, src, name string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(info) // records the Unix mode bits
	if err != nil {
		return err
	}
	h.Name = name
	h.Method = zip.Deflate
	h.Modified = stamp
	h.SetMode(info.Mode().Perm())
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(w, in)
	return err
}

func extract(in, dir string) error {
	zr, err := zip.OpenReader(in)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, zf := range zr.File {
		name := path.Clean(zf.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%s: entry %q leaves the target directory", in, zf.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if zf.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := unpack(zf, dst); err != nil {
			return err
		}
	}
	return nil
}

func unpack(zf *zip.File, dst string) error {
	r, err := zf.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	mode := zf.Mode().Perm()
	if mode == 0 {
		mode = 0o644
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // the umask may have narrowed it
}

func list(in string) error {
	zr, err := zip.OpenReader(in)
	if err != nil {
		return err
	}
	defer zr.Close()
	var total uint64
	for _, zf := range zr.File {
		total += zf.UncompressedSize64
		fmt.Printf("%s %10d %s\n", zf.Mode(), zf.UncompressedSize64, zf.Name)
	}
	fmt.Printf("unpacked %d\n", total)
	return nil
}
