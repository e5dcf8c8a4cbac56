// The dashboard's widget kinds as a person picks them (one choice for
// display_type and chart_type), and how wide a tile is.
import type { components } from '@/api/client'
import { t } from '@/i18n'

export type Widget = components['schemas']['WidgetResp']
export type WidgetData = components['schemas']['DataResp']
export type Sources = components['schemas']['DataSourcesResp']

export type Kind = 'number' | 'percentage' | 'line' | 'bar' | 'pie' | 'table'

// Labels are getters: read inside a render, they follow a switch of language.
export const kinds: { value: Kind; readonly label: string }[] = (['number', 'percentage', 'line', 'bar', 'pie', 'table'] as const).map((value) => ({
  value,
  get label() {
    return t(`dashboard.kinds.${value}`)
  },
}))

export function kindOf(w: Pick<Widget, 'display_type' | 'chart_type'>): Kind | 'shortcuts' {
  if (w.display_type === 'chart') return (w.chart_type || 'line') as Kind
  return w.display_type as Kind | 'shortcuts'
}

export function shape(kind: Kind): { display_type: string; chart_type: string } {
  return kind === 'line' || kind === 'bar' || kind === 'pie' ? { display_type: 'chart', chart_type: kind } : { display_type: kind, chart_type: '' }
}

/** Tile widths: the grid has 12 columns. */
export const widths: { value: number; readonly label: string; size: string }[] = [
  { value: 3, get label() { return t('dashboard.widths.quarter') }, size: 'small' },
  { value: 6, get label() { return t('dashboard.widths.half') }, size: 'medium' },
  { value: 12, get label() { return t('dashboard.widths.full') }, size: 'large' },
]

/** The tile's width in columns, one of 3, 6, 12. */
export function span(w: Pick<Widget, 'grid_w'>): number {
  return w.grid_w >= 12 ? 12 : w.grid_w >= 6 ? 6 : 3
}

/** A metric of the API (count, sum, avg) as a person reads it; an unknown one as is. */
export function metricLabel(m: string): string {
  return m === 'count' || m === 'sum' || m === 'avg' ? t(`dashboard.metrics.${m}`) : m
}

/** "platform_account" → "Platform account". */
export function fieldLabel(f: string): string {
  const s = f.replace(/_/g, ' ')
  return s.charAt(0).toUpperCase() + s.slice(1)
}

/**
 * Places widgets in order on the 12-column grid, left to right and top to
 * bottom, keeping their widths: the positions POST /api/widgets/layout
 * stores with the new order.
 */
export function flow(ws: Widget[]): { id: string; grid_x: number; grid_y: number; grid_w: number; grid_h: number }[] {
  let x = 0
  let y = 0
  let rowH = 0
  return ws.map((w) => {
    const width = span(w)
    if (x + width > 12) {
      x = 0
      y += rowH
      rowH = 0
    }
    const p = { id: w.id, grid_x: x, grid_y: y, grid_w: width, grid_h: w.grid_h }
    x += width
    rowH = Math.max(rowH, w.grid_h)
    return p
  })
}
