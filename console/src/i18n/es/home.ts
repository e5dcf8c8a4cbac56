// Spanish for ../en/home.ts (every key; vue-tsc checks it).
import type en from '../en/home'

export default {
  welcome: 'Hola, {name}',
  signedInAs: 'Has iniciado sesión como {email}, {role} en {org}.',
  dashboard: 'Panel',
  dashboardText: 'Mensajes recibidos y enviados hoy, conversaciones activas, transferencias en espera, campañas en curso, tasas de entrega y de lectura, y tus widgets.',
  openDashboard: 'Abrir el panel',
  organization: 'Organización',
  name: 'Nombre',
  yourRole: 'Tu rol',
  status: 'Estado',
  superAdmin: ' · superadministrador',
  timezone: 'Zona horaria',
  accountCreated: 'Cuenta creada',
  whereToGo: 'Adónde ir',
  yourOrgs: 'Tus organizaciones',
  orgNoun: 'organización | organizaciones',
  current: 'Actual',
  default: 'Predeterminada',
  allows: 'Lo que permite tu rol',
  permissions: '{n} permiso como {role} | {n} permisos como {role}',
} satisfies typeof en
