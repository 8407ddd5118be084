// Package racetest starts goroutines together, for the contract suites'
// races, and runs a suite on a racy store in a child process.
package racetest

import (
	"os"
	"os/exec"
	"sync"
)

// Run starts fn(0) … fn(n-1) in n goroutines released at once, and waits
// for them all.
func Run(n int, fn func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			fn(i)
		}()
	}
	start.Done()
	done.Wait()
}

// broken marks the child process BrokenSuite starts.
const broken = "RACETEST_BROKEN_STORE"

// Subject reports whether this process is the child BrokenSuite started:
// its TestBrokenStore runs the suite on a racy store; elsewhere it skips.
func Subject() bool { return os.Getenv(broken) != "" }

// BrokenSuite runs this test binary's TestBrokenStore in a child process
// and returns its verbose output and whether it failed, for a test that a
// suite catches the racy store.
func BrokenSuite() (out string, failed bool) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStore$", "-test.v")
	cmd.Env = append(os.Environ(), broken+"=1")
	b, err := cmd.CombinedOutput()
	return string(b), err != nil
}
