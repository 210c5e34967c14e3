export {
  WEEKDAYS,
  addDays,
  compareDates,
  dateOf,
  daysBetween,
  eachDate,
  fromEpochDay,
  isDateString,
  isoWeek,
  isoWeekString,
  toEpochDay,
  weekdayOf,
  yearOf,
  type Weekday,
} from './dates';
export {
  CalendarInputError,
  GERMAN_STATES,
  holidays,
  isCalendarInputError,
  isHoliday,
  isHolidayRegion,
  type GermanState,
  type Holiday,
  type HolidayRegion,
} from './holidays';
export { instantOf, isTimeZone, localDateOf, offsetAt } from './zone';
export {
  addBusinessMinutes,
  businessMinutesBetween,
  isBusinessTime,
  parseTime,
  validateCalendar,
  type BusinessCalendar,
  type BusinessHours,
  type BusinessInterval,
  type CalendarOrAlwaysOpen,
  type FieldError,
  type HolidaySource,
} from './business-time';
export { workingDayList, workingDays, type WorkingDaysOptions } from './working-days';
