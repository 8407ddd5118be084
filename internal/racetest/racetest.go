// Package racetest starts goroutines together, for the contract suites'
// races (jobstoretest, botstatetest).
package racetest

import "sync"

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
