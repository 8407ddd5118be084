package job

import (
	"context"
	"log/slog"
)

// Deleter removes one thing by its name: an object by its key, a
// recognition by its operation id.
type Deleter interface {
	Delete(ctx context.Context, name string) error
}

// FileKeys are the object keys a job may have files at: its source, its
// accepted copy of it, its transcript and its translations, and its
// converted pieces.
func FileKeys(j Job) []string {
	keys := []string{SourceKey(j.ID), AcceptedKey(j.ID), ResultKey(j.ID), TranslationsKey(j.ID)}
	for _, sg := range j.Segments {
		if sg.AudioKey != "" && sg.AudioKey != SourceKey(j.ID) && sg.AudioKey != AcceptedKey(j.ID) {
			keys = append(keys, sg.AudioKey)
		}
	}
	return keys
}

// Purge removes a deleted job's files and recognitions. What cannot be
// removed now is logged and left to the bucket's lifecycle rules and the
// recognizer's own retention; Purge reports how many removals failed.
func Purge(ctx context.Context, files, recognitions Deleter, log *slog.Logger, j Job) (failed int) {
	return RemoveFiles(ctx, files, log, j) + DeleteRecognitions(ctx, recognitions, log, j)
}

// RemoveFiles removes every file a job may have (FileKeys), logging and
// counting the removals that failed.
func RemoveFiles(ctx context.Context, files Deleter, log *slog.Logger, j Job) (failed int) {
	for _, k := range FileKeys(j) {
		if err := files.Delete(ctx, k); err != nil {
			failed++
			log.WarnContext(ctx, "could not remove a file of a job", "job_id", j.ID, "object_key", k, "error", err.Error())
		}
	}
	return failed
}

// DeleteRecognitions deletes the job's recognitions at the recognizer,
// logging and counting the deletions that failed.
func DeleteRecognitions(ctx context.Context, recognitions Deleter, log *slog.Logger, j Job) (failed int) {
	for _, sg := range j.Segments {
		if sg.OperationID == "" {
			continue
		}
		if err := recognitions.Delete(ctx, sg.OperationID); err != nil {
			failed++
			log.WarnContext(ctx, "could not delete a recognition of a job", "job_id", j.ID, "operation_id", sg.OperationID, "error", err.Error())
		}
	}
	return failed
}
