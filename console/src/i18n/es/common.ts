// Spanish for ../en/common.ts (every key; vue-tsc checks it).
import type en from '../en/common'

export default {
  loading: 'Cargando…',
  save: 'Guardar',
  saving: 'Guardando…',
  cancel: 'Cancelar',
  close: 'Cerrar',
  delete: 'Eliminar',
  edit: 'Editar',
  create: 'Crear',
  add: 'Añadir',
  remove: 'Quitar',
  search: 'Buscar',
  yes: 'Sí',
  no: 'No',
  none: 'Ninguno',
  all: 'Todos',
  retry: 'Reintentar',
  table: {
    empty: 'Todavía no hay nada aquí.',
    row: 'fila | filas',
    about: 'unos {count}',
    count: '{count} {noun}',
    range: '{first}–{last} de {total}',
    pages: '{caption}: páginas',
    previous: 'Página anterior',
    next: 'Página siguiente',
    pageOf: 'Página {page} de {pages}',
  },
  wait: {
    seconds: '{s} s',
  },
} satisfies typeof en
