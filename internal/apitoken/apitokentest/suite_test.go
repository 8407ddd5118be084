package apitokentest_test

import (
	"testing"

	"transcriber/internal/apitoken"
	"transcriber/internal/apitoken/apitokentest"
)

// The suite on the smallest correct store: shows the suite's own
// expectations are consistent.
func TestMemStoreKeepsTheContract(t *testing.T) {
	apitokentest.Run(t, func(*testing.T) apitoken.Store { return newMemStore() })
}
