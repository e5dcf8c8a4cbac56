package web

import "wharf/internal/infra/paging"

// PageQuery lists the paging query parameters; list routes embed it in
// their Query type.
type PageQuery struct {
	Page  int `query:"page" description:"Page number, from 1 (default 1)."`
	Limit int `query:"limit" description:"Page size; the list's maximum caps larger values."`
}

// Page is one page of a list whose items are under "items". Lists that name
// their array after the resource (users, members, tags...) have their own
// types with the same total, page and limit fields.
type Page[T any] struct {
	Items []T   `json:"items"`
	Total int64 `json:"total"`
	Page  int   `json:"page"`
	Limit int   `json:"limit"`
}

// NewPage is the page of items at pg among total.
func NewPage[T any](items []T, total int64, pg paging.Params) Page[T] {
	return Page[T]{Items: items, Total: total, Page: pg.Page, Limit: pg.Limit}
}

// Items is a list answered whole, under "items".
type Items[T any] struct {
	Items []T `json:"items"`
}
