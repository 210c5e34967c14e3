// Every answer hr gives a test is checked against the OpenAPI document it serves (startHr starts it
// with `conformance: true`): a test that receives an answer the document does not describe fails.
import { checkConformanceAfterEachTest } from '@msp/testkit';

checkConformanceAfterEachTest();
