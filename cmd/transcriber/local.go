package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"transcriber/internal/app"
	"transcriber/internal/localstack"
)

// local runs the whole service on this machine until ctx ends (Ctrl-C).
func local(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return err
	}
	lc := localstack.Config{
		App:      cfg,
		HTTPAddr: getenv("HTTP_ADDR"),
		S3Addr:   getenv("LOCAL_S3_ADDR"),
		DataDir:  dataDir(getenv),
	}
	for name, d := range map[string]*time.Duration{"POLL_INTERVAL": &lc.PollInterval, "SHUTDOWN_TIMEOUT": &lc.Shutdown} {
		if v := getenv(name); v != "" {
			if *d, err = time.ParseDuration(v); err != nil || *d <= 0 {
				return fmt.Errorf("%s: want a duration such as 5s", name)
			}
		}
	}
	if v := getenv("TELEGRAM_POLL"); v != "" {
		if lc.TelegramPoll, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("TELEGRAM_POLL: want true or false")
		}
	}
	return localstack.Run(ctx, lc, stdout)
}
