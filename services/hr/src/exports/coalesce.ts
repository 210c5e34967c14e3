// Moved to @msp/csv (desk's time export streams the same way); kept here so the export's routes import it as before.
export { coalesce } from '@msp/csv';
