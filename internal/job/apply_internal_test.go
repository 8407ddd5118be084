package job

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeadMessageNoLongerPromisesAnotherTry(t *testing.T) {
	require.Equal(t, "the speech recognizer failed on this audio; the service gave up after 5 attempts: send the file again later",
		deadMessage("the speech recognizer failed on this audio; it will be tried again", 5))
	require.Equal(t, "file storage is unavailable; the service gave up after 3 attempts: send the file again later",
		deadMessage("file storage is unavailable; try again later", 3))
}
