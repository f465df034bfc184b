// The six price tiers as a plain SVG bar chart (no chart library). Bars are
// scaled to the largest tier; the exact numbers are in the table beside it.
import type { Translate } from '../lib/i18n';
import { tierKey } from '../lib/format';

interface TierChartProps {
  tiers: readonly { tier: string; tokens: number }[];
  label: string;
  t: Translate;
  formatInt(value: number): string;
}

const WIDTH = 640;
const ROW = 34;
const LABEL = 210;
const VALUE = 90;

export function TierChart({ tiers, label, t, formatInt }: TierChartProps) {
  const max = Math.max(1, ...tiers.map((line) => line.tokens));
  const height = tiers.length * ROW + 8;
  const track = WIDTH - LABEL - VALUE;
  return (
    <svg className="tier-chart" viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
      <title>{label}</title>
      {tiers.map((line, index) => {
        const key = tierKey(line.tier);
        const y = 4 + index * ROW;
        const width = line.tokens === 0 ? 0 : Math.max(2, (line.tokens / max) * track);
        const thinking = line.tier.startsWith('thinking.');
        return (
          <g key={line.tier} data-tier={line.tier}>
            <text x={LABEL - 10} y={y + ROW / 2} className="tier-chart-label" textAnchor="end" dominantBaseline="middle">
              {key ? t(key) : line.tier}
            </text>
            <rect x={LABEL} y={y + 7} width={track} height={ROW - 14} rx={3} className="tier-chart-track" />
            <rect x={LABEL} y={y + 7} width={width} height={ROW - 14} rx={3} className={thinking ? 'tier-chart-bar thinking' : 'tier-chart-bar'}>
              <title>{`${key ? t(key) : line.tier}: ${formatInt(line.tokens)}`}</title>
            </rect>
            <text x={WIDTH - 4} y={y + ROW / 2} className="tier-chart-value" textAnchor="end" dominantBaseline="middle">
              {formatInt(line.tokens)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
