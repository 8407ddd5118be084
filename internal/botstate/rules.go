package botstate

import (
	"fmt"
	"time"
)

// ValidateChatUpdate is the argument rule of Store.UpdateChat: a time is
// given. Errors: ErrInvalid.
func ValidateChatUpdate(now time.Time) error {
	if now.IsZero() {
		return fmt.Errorf("%w: no time given", ErrInvalid)
	}
	return nil
}

// ApplyChatUpdate is the rule of Store.UpdateChat, run inside the store's
// transaction: cur is the chat as stored (Chat{ID: id} when it has no
// row). It returns cur after change, with UpdatedAt = now, times in UTC
// milliseconds as the stores keep them. Errors: ErrInvalid, for a zero now
// (change is not called) or a change that altered the chat id.
func ApplyChatUpdate(cur Chat, now time.Time, change func(*Chat)) (Chat, error) {
	if err := ValidateChatUpdate(now); err != nil {
		return Chat{}, err
	}
	c := cur
	change(&c)
	if c.ID != cur.ID {
		return Chat{}, fmt.Errorf("%w: the change altered the chat id %d to %d", ErrInvalid, cur.ID, c.ID)
	}
	c.BlockedAt, c.UpdatedAt = stored(c.BlockedAt), stored(now)
	return c, nil
}

func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}
