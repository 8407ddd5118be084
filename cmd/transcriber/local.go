package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"transcriber/internal/app"
	"transcriber/internal/localstack"
)

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
	if lc.CORSOrigins, err = corsOrigins(getenv("CORS_ALLOWED_ORIGINS")); err != nil {
		return err
	}
	if v := getenv("TELEGRAM_POLL"); v != "" {
		if lc.TelegramPoll, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("TELEGRAM_POLL: want true or false")
		}
	}
	return localstack.Run(ctx, lc, stdout)
}

// corsOrigins parses CORS_ALLOWED_ORIGINS: origins separated by commas, or "*".
func corsOrigins(v string) ([]string, error) {
	var list []string
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
				return nil, fmt.Errorf("CORS_ALLOWED_ORIGINS: %q is not an origin such as https://app.example or http://localhost:3000", o)
			}
		}
		list = append(list, o)
	}
	return list, nil
}
