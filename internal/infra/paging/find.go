package paging

import "gorm.io/gorm"

// Find counts the rows q selects and loads page pg of them in order. q
// carries the model, the tenant scope and the filters; order must make the
// order total (end with a unique column), so that pages neither repeat nor
// skip rows. The page is not read when the count says it is empty.
func Find[T any](q *gorm.DB, pg Params, order string) ([]T, int64, error) {
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	out := []T{}
	if total == 0 || int64(pg.Offset()) >= total {
		return out, total, nil
	}
	err := q.Session(&gorm.Session{}).Order(order).Limit(pg.Limit).Offset(pg.Offset()).Find(&out).Error
	return out, total, err
}

// Raw is Find for a hand-written query: it counts the rows of query and
// loads page pg of them in order. args holds the query's named parameters
// (@name); @limit and @offset are added.
func Raw[T any](db *gorm.DB, query string, args map[string]any, pg Params, order string) ([]T, int64, error) {
	var total int64
	if err := db.Raw("SELECT count(*) FROM ("+query+") t", args).Scan(&total).Error; err != nil {
		return nil, 0, err
	}
	out := []T{}
	if total == 0 || int64(pg.Offset()) >= total {
		return out, total, nil
	}
	paged := make(map[string]any, len(args)+2)
	for k, v := range args {
		paged[k] = v
	}
	paged["limit"], paged["offset"] = pg.Limit, pg.Offset()
	err := db.Raw(query+" ORDER BY "+order+" LIMIT @limit OFFSET @offset", paged).Scan(&out).Error
	return out, total, err
}
