/** Placeholder until the page lands. */
export default function Page() {
  return <p>result-detail</p>;
}
