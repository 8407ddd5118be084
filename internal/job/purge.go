package job

import (
	"context"
	"log/slog"
)

// Deleter removes an object by key or a recognition by operation id.
type Deleter interface {
	Delete(ctx context.Context, name string) error
}

// FileKeys are every object key a job may have files at.
func FileKeys(j Job) []string {
	keys := []string{SourceKey(j.ID), AcceptedKey(j.ID), ResultKey(j.ID), TranslationsKey(j.ID)}
	for _, sg := range j.Segments {
		if sg.AudioKey != "" && sg.AudioKey != SourceKey(j.ID) && sg.AudioKey != AcceptedKey(j.ID) {
			keys = append(keys, sg.AudioKey)
		}
	}
	return keys
}

// Purge removes a deleted job's files and recognitions; what fails is
// logged, counted, and left to lifecycle rules and the recognizer's retention.
func Purge(ctx context.Context, files, recognitions Deleter, log *slog.Logger, j Job) (failed int) {
	return RemoveFiles(ctx, files, log, j) + DeleteRecognitions(ctx, recognitions, log, j)
}

func RemoveFiles(ctx context.Context, files Deleter, log *slog.Logger, j Job) (failed int) {
	for _, k := range FileKeys(j) {
		if err := files.Delete(ctx, k); err != nil {
			failed++
			log.WarnContext(ctx, "job file not removed", "job_id", j.ID, "object_key", k, "error", err.Error())
		}
	}
	return failed
}

func DeleteRecognitions(ctx context.Context, recognitions Deleter, log *slog.Logger, j Job) (failed int) {
	for _, sg := range j.Segments {
		if sg.OperationID == "" {
			continue
		}
		if err := recognitions.Delete(ctx, sg.OperationID); err != nil {
			failed++
			log.WarnContext(ctx, "job recognition not deleted", "job_id", j.ID, "operation_id", sg.OperationID, "error", err.Error())
		}
	}
	return failed
}
