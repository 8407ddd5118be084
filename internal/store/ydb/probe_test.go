package ydb

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
)

func TestUnitsSumTheTrailersThatCarryThem(t *testing.T) {
	m := &unitMeter{}
	_, reported := m.read()
	require.False(t, reported, "no response yet")
	m.add(metadata.Pairs("x-request-id", "1"))
	_, reported = m.read()
	require.False(t, reported, "a trailer without units reports none")
	m.add(metadata.Pairs(consumedUnitsHeader, "3", "x-request-id", "2"))
	m.add(metadata.Pairs(consumedUnitsHeader, "4"))
	units, reported := m.read()
	require.True(t, reported)
	require.Equal(t, 7.0, units)
}
