import path from 'node:path';
import { describeImportRules } from '@msp/testkit';

// Data flows one way (route → service → repository) and events are recorded by the services:
// the import graph keeps that shape, and a new circle or a shortcut fails here.
describeImportRules(path.join(__dirname, '../src'));
