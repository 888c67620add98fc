/** Placeholder until the page lands. */
export default function Page() {
  return <p>private-locations</p>;
}
