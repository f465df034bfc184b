// Calendar arithmetic in an account's IANA time zone. Expiry days, months of
// settlement and `last_used_at` are all read in the account's zone.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, f);
  }
  return f;
}

interface Parts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

function parts(zone: string, at: Date): Parts {
  const out: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(at)) out[p.type] = p.value;
  return out as unknown as Parts;
}

// Every zone's offset has been a whole number of minutes since 1972, so a
// zone's date is the same for every instant of one UTC minute. Key auth and
// metering ask for it on every call, and formatToParts is slow; the last
// answer per zone is kept for the rest of its minute.
const MEMO_FROM = Date.UTC(1973, 0, 1);
const lastDate = new Map<string, { minute: number; date: string }>();

/** `YYYY-MM-DD` of `at` in `zone`. */
export function zoneDate(zone: string, at: Date = new Date()): string {
  const time = at.getTime();
  const minute = Math.floor(time / 60_000);
  const memo = time >= MEMO_FROM ? lastDate.get(zone) : undefined;
  if (memo && memo.minute === minute) return memo.date;
  const p = parts(zone, at);
  const date = `${p.year}-${p.month}-${p.day}`;
  if (time >= MEMO_FROM) lastDate.set(zone, { minute, date });
  return date;
}

/** `YYYY-MM-DD HH:MM:SS` of `at` in `zone` (the spec's `last_used_at` form). */
export function zoneDateTime(zone: string, at: Date): string {
  const p = parts(zone, at);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** `YYYY-MM` of `at` in `zone`. */
export function zoneMonth(zone: string, at: Date = new Date()): string {
  return zoneDate(zone, at).slice(0, 7);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date in `YYYY-MM-DD` form (2026-02-30 is not). */
export function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The calendar day after `date` (`YYYY-MM-DD`). */
export function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** The first day of the month after `month` (`YYYY-MM`), as `YYYY-MM-DD`. */
export function nextMonthStart(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}
