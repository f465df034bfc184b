import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';

describe('config', () => {
  it('uses the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.host).to.equal('127.0.0.1');
    expect(config.timezone).to.equal('UTC');
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.heapGrowthPercent).to.equal(30);
    expect(config.bodyBudgetBytes).to.equal(undefined);
    expect(config.metricsToken).to.equal(undefined);
    expect(config.headersTimeoutMs).to.equal(15_000);
    expect(config.requestTimeoutMs).to.equal(60_000);
    expect(config.usageSyncCommit, 'usage batches wait for the WAL flush').to.equal(true);
    expect(config.systemDataDir, 'where root keeps a cluster the postgres user could not reach').to.equal('/var/lib/tsxt-gateway');
  });

  it('reads GATEWAY_TRUSTED_PROXIES as IPs and CIDRs, none by default', () => {
    expect(loadConfig({}).trustedProxies).to.deep.equal([]);
    expect(loadConfig({ GATEWAY_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.10,fd00::/8' }).trustedProxies).to.deep.equal(['10.0.0.0/8', '192.168.1.10', 'fd00::/8']);
  });

  it('lets GATEWAY_USAGE_SYNC_COMMIT=off trade the crash window for a shorter commit wait', () => {
    expect(loadConfig({ GATEWAY_USAGE_SYNC_COMMIT: 'off' }).usageSyncCommit).to.equal(false);
    expect(loadConfig({ GATEWAY_USAGE_SYNC_COMMIT: 'on' }).usageSyncCommit).to.equal(true);
  });

  it('reads GATEWAY_CLIENT_BODY_BUDGET_MB in megabytes (unset: a quarter of the body budget) and refuses one above GATEWAY_BODY_BUDGET_MB', () => {
    expect(loadConfig({}).clientBodyBudgetBytes).to.equal(undefined);
    expect(loadConfig({ GATEWAY_CLIENT_BODY_BUDGET_MB: '16' }).clientBodyBudgetBytes).to.equal(16 * 1024 * 1024);
    expect(() => loadConfig({ GATEWAY_BODY_BUDGET_MB: '8', GATEWAY_CLIENT_BODY_BUDGET_MB: '16' }))
      .to.throw(ConfigError, /GATEWAY_BODY_BUDGET_MB/)
      .with.property('variable', 'GATEWAY_CLIENT_BODY_BUDGET_MB');
  });

  const bad: Array<[string, string]> = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['GATEWAY_TIMEZONE', 'Mars/Olympus'],
    ['DATABASE_URL', 'mysql://x'],
    ['GATEWAY_BOOTSTRAP_TOKEN', 'short'],
    ['GATEWAY_WORKERS', '0'],
    ['GATEWAY_METRICS_TOKEN', 'too-short'],
    ['GATEWAY_METRICS_TOKEN', 'has a space in it somewhere'],
    ['GATEWAY_BODY_BUDGET_MB', '0'],
    ['GATEWAY_CLIENT_BODY_BUDGET_MB', '0'],
    ['GATEWAY_CLIENT_BODY_BUDGET_MB', 'half'],
    ['GATEWAY_HEAP_GROWTH_PERCENT', '-5'],
    ['GATEWAY_STREAM_STALL_MS', '10'],
    ['GATEWAY_REQUEST_TIMEOUT_MS', '0'],
    ['GATEWAY_CONTROL_PLANE_TIMEOUT_MS', '10s'],
    ['GATEWAY_CONTROL_PLANE_TIMEOUT_MS', '50'],
    ['GATEWAY_HEADERS_TIMEOUT_MS', 'soon'],
    ['GATEWAY_USAGE_SYNC_COMMIT', 'maybe'],
    ['GATEWAY_TRUSTED_PROXIES', 'my-load-balancer'],
    ['GATEWAY_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['GATEWAY_SYSTEM_DATA_DIR', 'var/lib/gw'],
  ];
  for (const [name, value] of bad) {
    it(`stops start-up naming ${name} when it is "${value}"`, () => {
      expect(() => loadConfig({ [name]: value }))
        .to.throw(ConfigError)
        .with.property('variable', name);
    });
  }
});
